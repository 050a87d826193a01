/**
 * Parse and preview of a contact list (100 000 rows by default), on one database in one run:
 *
 * 1. Baseline: a bare csv-parse streaming loop over the same file (`fs` read stream →
 *    csv-parse with the file's delimiter, counting records). No decoding, matching or storage.
 * 2. The import: `Imports.create` with `openCsv` — encoding detection, csv-parse in the
 *    parser thread, Romanian letter normalisation, header aliases, field conversion, matching
 *    against existing contacts, staging every valid row and every error in the database,
 *    and the job's progress — ending with the job `ready` and its preview.
 *
 * 3. The apply of that preview: every staged row written as a new contact through the contacts'
 *    repository, each change recorded, in one transaction, ending with the job `completed`.
 *
 * BENCH_ROUNDS rounds (5) alternate between the bare loop and the import (preview, then apply,
 * each timed) after a warm-up of each; every round imports into a fresh organization, so every
 * row is new. The medians are reported, and this process's CPU time per row (every thread, not
 * PostgreSQL's). Memory: a sampler reads `process.memoryUsage()` every 20 ms during each run; the
 * figures are the peaks over the rounds (RSS of the whole process, and the JS heap).
 *
 *   DATABASE_URL=postgres://... npx node --expose-gc node_modules/tsx/dist/cli.mjs --conditions source benchmarks/imports/bench.ts
 *   (without DATABASE_URL it uses an in-memory PGlite; BENCH_ROWS changes the row count)
 */
import { Effect } from "effect"
import { parse } from "csv-parse"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ImportModel, Imports, Tenancy } from "@opsplatform/core"
import { writeContactsCsv } from "@opsplatform/testing/importFiles"
import { openCsv } from "../../packages/http-node/src/imports/csvFile.ts"
import { openBenchCore } from "../support/core.ts"
import { medianBy } from "../support/rounds.ts"

const rows = Number(process.env.BENCH_ROWS ?? 100_000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const MiB = 1024 * 1024
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "imports-bench-"))
const file = path.join(dir, "contacts.csv")
const bytes = writeContactsCsv(file, rows)

const gc = () => (globalThis as { gc?: () => void }).gc?.()

/** Runs `work`, sampling memory every 20 ms; returns its duration and the peaks. */
const measured = async <A>(work: () => Promise<A>) => {
  gc()
  const start = process.memoryUsage()
  let rss = start.rss
  let heap = start.heapUsed
  const sample = () => {
    const m = process.memoryUsage()
    rss = Math.max(rss, m.rss)
    heap = Math.max(heap, m.heapUsed)
  }
  const timer = setInterval(sample, 20)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  try {
    const result = await work()
    sample()
    const ms = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    return { result, ms, cpuMs: (cpu.user + cpu.system) / 1000, peakRss: rss, peakHeap: heap, startRss: start.rss, startHeap: start.heapUsed }
  } finally {
    clearInterval(timer)
  }
}

const bareLoop = async () => {
  let records = 0
  const parser = fs.createReadStream(file).pipe(parse({ delimiter: ";", bom: true, relax_column_count: true }))
  for await (const _record of parser) records++
  return records - 1
}

const { close, database, run } = await openBenchCore()
try {
  const freshTenant = () =>
    run(Effect.gen(function*() {
      const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name: "Import bench" })
      return { organizationId: org.id, environment: "live" as const }
    }))
  let tenant = await freshTenant()
  const importOnce = (path = file) =>
    run(Effect.flatMap(Imports.Imports, (imports) =>
      imports.create(tenant, { entity: "contacts", source: "cli", filename: "contacts.csv" }, openCsv(fs.createReadStream(path)))))
  const applyOnce = (job: ImportModel.ImportJob) => run(Effect.flatMap(Imports.Imports, (imports) => imports.apply(tenant, job.id)))

  // Warm-up (JIT, connections): the bare loop over the file, the import over a tenth of it (a preview: nothing is written).
  await bareLoop()
  const warmFile = path.join(dir, "warm.csv")
  writeContactsCsv(warmFile, Math.ceil(rows / 10))
  await applyOnce(await importOnce(warmFile))
  // Rounds alternate between the two so that a busy moment of the machine falls on both; the medians are reported.
  const baselines: Array<Awaited<ReturnType<typeof measured<number>>>> = []
  const imports: Array<Awaited<ReturnType<typeof measured<ImportModel.ImportJob>>>> = []
  const applies: Array<Awaited<ReturnType<typeof measured<ImportModel.ImportJob>>>> = []
  for (let round = 0; round < rounds; round++) {
    tenant = await freshTenant()
    baselines.push(await measured(bareLoop))
    const previewed = await measured(() => importOnce())
    imports.push(previewed)
    applies.push(await measured(() => applyOnce(previewed.result)))
  }
  for (const b of baselines) if (b.result !== rows) throw new Error(`the bare loop read ${b.result} rows, not ${rows}`)
  for (const { result: job } of imports) {
    if (job.status !== "ready" || job.preview.news !== rows) throw new Error(`the import ended ${job.status}: ${JSON.stringify(job.preview)}`)
  }
  for (const { result: job } of applies) {
    if (job.status !== "completed" || job.imported_count !== rows) throw new Error(`the apply ended ${job.status}, ${job.imported_count} imported`)
  }
  const baseline = medianBy(baselines, (r) => r.ms)
  const imported = medianBy(imports, (r) => r.ms)
  const applied = medianBy(applies, (r) => r.ms)
  const peak = (runs: ReadonlyArray<{ readonly peakRss: number; readonly peakHeap: number }>) => ({
    rss: Math.max(...runs.map((r) => r.peakRss)),
    heap: Math.max(...runs.map((r) => r.peakHeap))
  })

  const rate = (ms: number) => Math.round(rows / (ms / 1000))
  const line = (name: string, m: { readonly ms: number }, runs: ReadonlyArray<{ readonly peakRss: number; readonly peakHeap: number }>) =>
    `| ${name} | ${(m.ms / 1000).toFixed(2)} | ${rate(m.ms).toLocaleString("en")} | ${(peak(runs).rss / MiB).toFixed(0)} | ${
      (peak(runs).heap / MiB).toFixed(0)
    } |`
  console.log(`database: ${database._tag}, ${rows} rows, ${(bytes / MiB).toFixed(1)} MiB file, node ${process.version}, ${rounds} rounds`)
  console.log("| run (median round) | seconds | rows/s | peak RSS MiB | peak heap MiB |")
  console.log("|---|---|---|---|---|")
  console.log(line("bare csv-parse loop", baseline, baselines))
  console.log(line("import: parse + preview (staged in the database)", imported, imports))
  console.log(`| **ratio** | | **${(baseline.ms / imported.ms).toFixed(2)}** | | |`)
  console.log(line("apply: every row a new contact, one transaction", applied, applies))
  console.log(`| **ratio (bare loop / apply)** | | **${(baseline.ms / applied.ms).toFixed(3)}** | | |`)
  console.log(`rounds' ratios, preview: ${baselines.map((b, i) => (b.ms / imports[i]!.ms).toFixed(2)).join(", ")}`)
  console.log(`rounds' ratios, apply: ${baselines.map((b, i) => (b.ms / applies[i]!.ms).toFixed(3)).join(", ")}`)
  const added = (runs: ReadonlyArray<{ readonly peakRss: number; readonly startRss: number; readonly peakHeap: number; readonly startHeap: number }>) =>
    `RSS +${(Math.max(...runs.map((r) => r.peakRss - r.startRss)) / MiB).toFixed(0)} MiB, heap +${
      (Math.max(...runs.map((r) => r.peakHeap - r.startHeap)) / MiB).toFixed(0)
    } MiB`
  // This process's CPU (every thread of it; not PostgreSQL's) per row: less moved by other load on the machine than the seconds.
  const cpuPerRow = (runs: ReadonlyArray<{ readonly cpuMs: number }>) =>
    `${(medianBy(runs, (r) => r.cpuMs).cpuMs * 1000 / rows).toFixed(1)} µs`
  console.log(`process CPU per row (median round): bare loop ${cpuPerRow(baselines)}, preview ${cpuPerRow(imports)}, apply ${cpuPerRow(applies)}`)
  console.log(`most a run added to the process: bare loop ${added(baselines)}; import ${added(imports)}; apply ${added(applies)}`)
} finally {
  await close()
  fs.rmSync(dir, { recursive: true, force: true })
}
