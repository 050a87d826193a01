import { Effect, Stream } from "effect"
import { parse } from "csv-parse"
import * as fs from "node:fs"
import { writeContactsCsv } from "@opsplatform/testing/importFiles"
import { openCsv } from "../../packages/http-node/src/imports/csvFile.ts"
const file = "/tmp/contacts-100k.csv"
if (!fs.existsSync(file)) writeContactsCsv(file, 100_000)
const bare = async () => { let n = 0; for await (const _ of fs.createReadStream(file).pipe(parse({ delimiter: ";", bom: true, relax_column_count: true }))) n++; return n }
const viaOpen = () => Effect.runPromise(Effect.flatMap(openCsv(fs.createReadStream(file)), (f) => Stream.runForEachArray(f.records.pipe(Stream.rechunk(1000)), (c) => Effect.void)))
for (let i = 0; i < 3; i++) {
  let t = performance.now(); await bare(); const b = performance.now() - t
  t = performance.now(); await viaOpen(); const o = performance.now() - t
  console.log(`bare ${b.toFixed(0)} ms, openCsv ${o.toFixed(0)} ms`)
}
