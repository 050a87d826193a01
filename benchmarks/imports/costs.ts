/**
 * What each piece of a preview costs per row, one thread, no database: the
 * pieces `bench.ts` times together, taken apart on the same generated
 * contact list, so the ratio it reports can be read against its parts.
 *
 * - csv-parse alone (the bare loop's work);
 * - the row checks every preview makes: header columns, field conversion and
 *   validation (CUI control digit, lengths, addresses), duplicate keys;
 * - the staged batch's text (`stagedText`, what apply reads back);
 * - moving records from the parser thread to the main one: structured clone
 *   (what `openCsv` does), and the cheapest alternative, one joined text split
 *   again.
 *
 *   npx tsx --conditions source benchmarks/imports/costs.ts
 *   (BENCH_ROWS changes the row count, 100 000 by default)
 */
import { parse } from "csv-parse/sync"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import { stagedText } from "@opsplatform/core/imports/ImportRepo"
import { entitySpecs, resolveColumns, rowTexts } from "@opsplatform/core/imports/rules"
import type { StagedRow } from "@opsplatform/core/imports/ImportRepo"
import { writeContactsCsv } from "@opsplatform/testing/importFiles"

const rows = Number(process.env.BENCH_ROWS ?? 100_000)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "imports-costs-"))
const file = path.join(dir, "contacts.csv")
writeContactsCsv(file, rows)
const bytes = fs.readFileSync(file)

const records = (): Array<Array<string>> => parse(bytes, { delimiter: ";", bom: true, relax_column_count: true, skip_empty_lines: true })
const [header, ...data] = records()
const resolved = resolveColumns("contacts", "generic", header!, {})
if (!resolved.ok) throw new Error(resolved.message)
const spec = entitySpecs.contacts

/** The checks of every row: its texts by column, conversion and validation, and the file's duplicate keys. */
const check = (): Array<StagedRow> => {
  const seen = new Map<string, number>()
  const valid: Array<StagedRow> = []
  data.forEach((fields, i) => {
    const raw = rowTexts(resolved.columns, header!.length, fields)
    if (typeof raw === "string") return
    const converted = spec.convert(raw)
    if (converted.issues.length > 0) return
    if (converted.key !== null) {
      if (seen.has(converted.key)) return
      seen.set(converted.key, i + 1)
    }
    valid.push({ row: i + 1, key: converted.key, fields: converted.fields })
  })
  return valid
}
const valid = check()
if (valid.length !== rows) throw new Error(`${valid.length} of ${rows} rows were valid`)

const batches = <A>(list: ReadonlyArray<A>) => Array.from({ length: Math.ceil(list.length / 1000) }, (_, b) => list.slice(b * 1000, b * 1000 + 1000))
const recordBatches = batches(data)
const serialized = recordBatches.map((b) => v8.serialize(b))
const joined = recordBatches.map((b) => b.map((r) => r.join("\u001f")).join("\u001e"))

/** Median microseconds per row over `runs` runs, after two warm-up runs. */
const perRow = (work: () => unknown, runs = 7) => {
  work()
  work()
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    work()
    times.push(performance.now() - t0)
  }
  return Math.round(([...times].sort((a, b) => a - b)[Math.floor(runs / 2)]! / rows) * 1e5) / 100
}

const pieces: ReadonlyArray<readonly [string, () => unknown]> = [
  ["csv-parse (the bare loop's work)", records],
  ["row checks: columns, conversion, validation, duplicate keys", check],
  ["staged text of the valid rows (stagedText, per 1000)", () => batches(valid).map(stagedText)],
  ["records between threads: structured clone (serialize + deserialize)", () => recordBatches.map((b) => v8.deserialize(v8.serialize(b)))],
  ["  of which deserialize (on the main thread)", () => serialized.map((s) => v8.deserialize(s))],
  ["records between threads: one joined text, split again", () => recordBatches.map((b) => b.map((r) => r.join("\u001f")).join("\u001e").split("\u001e"))],
  ["  of which split (on the main thread)", () => joined.map((j) => j.split("\u001e").map((r) => r.split("\u001f")))]
]
console.log(`${rows} rows, ${(bytes.length / 1048576).toFixed(1)} MiB, node ${process.version}; median µs per row`)
console.log("| piece | µs/row |")
console.log("|---|---|")
for (const [name, work] of pieces) console.log(`| ${name} | ${perRow(work).toFixed(2)} |`)
fs.rmSync(dir, { recursive: true, force: true })
