/**
 * Parse and preview of a contact list (100 000 rows by default), on one database in one run:
 *
 * 1. Baseline: a bare csv-parse streaming loop over the same file (`fs` read stream →
 *    csv-parse with the file's delimiter, counting records). No decoding, matching or storage.
 * 2. The import: `Imports.create` with `openCsv` — encoding detection, iconv-lite decoding,
 *    csv-parse, Romanian letter normalisation, header aliases, field conversion, matching
 *    against existing contacts, staging every valid row and every error in the database,
 *    and the job's progress every 1000 rows — ending with the job `ready` and its preview.
 *
 * Memory: a sampler reads `process.memoryUsage()` every 20 ms during each phase; the
 * figures are the peaks (RSS of the whole process, and the JS heap).
 *
 *   DATABASE_URL=postgres://... node --expose-gc node_modules/.bin/tsx --conditions source benchmarks/imports/bench.ts
 *   (without DATABASE_URL it uses an in-memory PGlite; BENCH_ROWS changes the row count)
 */
import { Effect } from "effect"
import { parse } from "csv-parse"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Imports, Tenancy } from "@opsplatform/core"
import { writeContactsCsv } from "@opsplatform/testing/importFiles"
import { openCsv } from "../../packages/http-node/src/imports/csvFile.ts"
import { openBenchCore } from "../support/core.ts"

const rows = Number(process.env.BENCH_ROWS ?? 100_000)
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
  const t0 = performance.now()
  try {
    const result = await work()
    sample()
    return { result, ms: performance.now() - t0, peakRss: rss, peakHeap: heap, startRss: start.rss, startHeap: start.heapUsed }
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
  const tenant = await run(Effect.gen(function*() {
    const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name: "Import bench" })
    return { organizationId: org.id, environment: "live" as const }
  }))
  const importOnce = () =>
    run(Effect.flatMap(Imports.Imports, (imports) =>
      imports.create(tenant, { entity: "contacts", source: "cli", filename: "contacts.csv" }, openCsv(fs.createReadStream(file)))))

  // Warm-up (JIT, connections), on a tenth of the work each.
  await bareLoop()
  const baseline = await measured(bareLoop)
  const imported = await measured(importOnce)
  if (baseline.result !== rows) throw new Error(`the bare loop read ${baseline.result} rows, not ${rows}`)
  const job = imported.result
  if (job.status !== "ready" || job.preview.news !== rows) throw new Error(`the import ended ${job.status}: ${JSON.stringify(job.preview)}`)

  const rate = (ms: number) => Math.round(rows / (ms / 1000))
  const line = (name: string, m: typeof baseline) =>
    `| ${name} | ${(m.ms / 1000).toFixed(2)} | ${rate(m.ms).toLocaleString("en")} | ${(m.peakRss / MiB).toFixed(0)} | ${
      (m.peakHeap / MiB).toFixed(0)
    } |`
  console.log(`database: ${database._tag}, ${rows} rows, ${(bytes / MiB).toFixed(1)} MiB file, node ${process.version}`)
  console.log("| run | seconds | rows/s | peak RSS MiB | peak heap MiB |")
  console.log("|---|---|---|---|---|")
  console.log(line("bare csv-parse loop", baseline))
  console.log(line("import: parse + preview (staged in the database)", imported))
  console.log(`| **ratio** | | **${(baseline.ms / imported.ms).toFixed(2)}** | | |`)
  console.log(`(RSS before the import: ${(imported.startRss / MiB).toFixed(0)} MiB; heap before: ${(imported.startHeap / MiB).toFixed(0)} MiB)`)
} finally {
  await close()
  fs.rmSync(dir, { recursive: true, force: true })
}
