import { parse } from "csv-parse"
import iconv from "iconv-lite"
import * as fs from "node:fs"
import { normalizeRomanian } from "@opsplatform/core/imports/rules"
const file = "/tmp/contacts-100k.csv"
const drain = async (parser: any, map: boolean) => {
  let n = 0
  let ended = false
  parser.on("end", () => (ended = true))
  while (true) {
    let item
    while ((item = parser.read()) !== null) { n++; if (map) (item.record ?? item).map(normalizeRomanian) }
    if (ended) return n
    await new Promise<void>((r) => { const d = () => { parser.off("readable", d); parser.off("end", d); r() }; parser.on("readable", d); parser.on("end", d) })
  }
}
const variants: Record<string, () => Promise<number>> = {
  bare: async () => { let n = 0; for await (const _ of fs.createReadStream(file).pipe(parse({ delimiter: ";", bom: true, relax_column_count: true }))) n++; return n },
  readLoop: () => drain(fs.createReadStream(file).pipe(parse({ delimiter: ";", bom: true, relax_column_count: true })), false),
  readLoopInfo: () => drain(fs.createReadStream(file).pipe(parse({ delimiter: ";", bom: true, relax_column_count: true, info: true, skip_empty_lines: true })), false),
  readLoopInfoIconv: () => drain(fs.createReadStream(file).pipe(iconv.decodeStream("UTF-8")).pipe(parse({ delimiter: ";", bom: true, relax_column_count: true, info: true, skip_empty_lines: true })), false),
  readLoopInfoNorm: () => drain(fs.createReadStream(file).pipe(parse({ delimiter: ";", bom: true, relax_column_count: true, info: true, skip_empty_lines: true })), true),
}
for (let i = 0; i < 6; i++) {
  const out: Array<string> = []
  for (const [name, f] of Object.entries(variants)) { const t = performance.now(); await f(); out.push(`${name} ${(performance.now() - t).toFixed(0)}`) }
  console.log(out.join(", "))
}
