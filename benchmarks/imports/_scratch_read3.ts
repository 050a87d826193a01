import { parse } from "csv-parse"
import * as fs from "node:fs"
const file = process.argv[2] ?? "/tmp/contacts-100k.csv"
const opts = { delimiter: ";", bom: true, relax_column_count: true, skip_empty_lines: true }
const dataLines = () => new Promise<Array<number>>((resolve, reject) => {
  const lines: Array<number> = []
  const p = parse(opts)
  p.on("data", (_r) => { lines.push(p.info.lines) })
  p.on("end", () => resolve(lines)); p.on("error", reject)
  fs.createReadStream(file).pipe(p)
})
const infoLines = async () => { const lines: Array<number> = []; for await (const r of fs.createReadStream(file).pipe(parse({ ...opts, info: true }))) lines.push(r.info.lines); return lines }
const bare = async () => { let n = 0; for await (const _ of fs.createReadStream(file).pipe(parse({ delimiter: ";", bom: true, relax_column_count: true }))) n++; return n }
const a = await dataLines(), b = await infoLines()
console.log("equal:", a.length === b.length && a.every((x, i) => x === b[i]), a.length, a.slice(0, 5), b.slice(0, 5))
for (let i = 0; i < 5; i++) {
  let t = performance.now(); await bare(); const x = performance.now() - t
  t = performance.now(); await dataLines(); const y = performance.now() - t
  console.log(`bare ${x.toFixed(0)} dataLines ${y.toFixed(0)}`)
}
