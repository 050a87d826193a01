import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ImportModel } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { csvCell, issuesCsv } from "../src/http/Imports.ts"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

const upload = async (server: TestServer, token: string, query: string, body: string | Buffer | FormData, type?: string) => {
  const response = await fetch(`${server.url}/v1/imports?${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, ...(type === undefined ? {} : { "content-type": type }) },
    body
  })
  return { status: response.status, json: await response.json() as any }
}

/** A multipart body written by hand: any number of parts, each a field or a file. */
const multipart = (parts: ReadonlyArray<{ readonly name: string; readonly filename?: string; readonly value: string }>) => {
  const boundary = "----opsplatform-test-boundary"
  const body = parts.map((p) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename === undefined ? "" : `; filename="${p.filename}"`}\r\n` +
    `${p.filename === undefined ? "" : "Content-Type: text/csv\r\n"}\r\n${p.value}\r\n`
  ).join("") + `--${boundary}--\r\n`
  return { body: Buffer.from(body), type: `multipart/form-data; boundary=${boundary}` }
}

for (const db of testDatabases()) {
  describe(`uploads stay within their bounds (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
    })
    afterAll(() => server.close())

    it("a header cell past 256 characters fails the job without repeating it; a 20 MB cell stops at the record limit", async () => {
      const long = await upload(server, f.tokens.api, "entity=contacts", `Denumire,${"H".repeat(ImportModel.MAX_HEADER_CHARS + 1)}\nX,1\n`, "text/csv")
      expect(long.json.data.status).toBe("failed")
      expect(long.json.data.failure.code).toBe("header_too_long")
      expect(long.json.data.failure.message).not.toContain("HHHH")
      const edge = await upload(server, f.tokens.api, "entity=contacts", `Denumire,${"H".repeat(ImportModel.MAX_HEADER_CHARS)}\nX,1\n`, "text/csv")
      expect(edge.json.data.status).toBe("ready")
      // A cell of 20 MB once went whole into failure.message, and every later GET /v1/imports answered 503.
      const huge = await upload(server, f.tokens.api, "entity=contacts", Buffer.from(`${"=".repeat(20 * 1024 * 1024)}\nX\n`), "text/csv")
      expect(huge.json.data.status).toBe("failed")
      expect(huge.json.data.failure.code).toBe("record_too_large")
      expect(huge.json.data.failure.message.length).toBeLessThan(300)
      const list = await call(server, "GET", "/v1/imports?perPage=100", { token: f.tokens.api })
      expect(list.status).toBe(200)
      expect(JSON.stringify(list.json).length).toBeLessThan(200_000)
    }, 120_000)

    it("stores an error's field once per job, not the file's header on every error row, and shows the header", async () => {
      const header = `CIF/CNP ${"x".repeat(200)}`
      const rows = Array.from({ length: 300 }, (_, i) => `Firma ${i},12345`)
      const job = await upload(server, f.tokens.api, `entity=contacts&mapping=${encodeURIComponent(JSON.stringify({ vat_number: header }))}`,
        [`Denumire,${header}`, ...rows].join("\n") + "\n", "text/csv")
      expect(job.json.data).toMatchObject({ status: "ready", preview: { errors: 300 } })
      expect(job.json.data.preview.samples.errors[0].column).toBe(header)
      const stored = await server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ field: string | null; n: number }>`SELECT field, count(*)::int AS n FROM import_errors WHERE job_id = ${job.json.data.id} GROUP BY field`
      }))
      expect(stored).toEqual([{ field: "vat_number", n: 300 }])
      const errors = await call(server, "GET", `/v1/imports/${job.json.data.id}/errors`, { token: f.tokens.api })
      expect(errors.json.data).toHaveLength(300)
      expect(new Set(errors.json.data.map((e: { column: string }) => e.column))).toEqual(new Set([header]))
    })

    it("holds the filename to 255 characters however it comes: query, multipart field, the file part's own name", async () => {
      const name = `${"n".repeat(252)}.csv`
      const csv = "Denumire\nX\n"
      const query = await upload(server, f.tokens.api, `entity=contacts&filename=${name}`, csv, "text/csv")
      expect([query.status, query.json.error.details[0].field]).toEqual([400, "filename"])
      const field = multipart([{ name: "entity", value: "contacts" }, { name: "filename", value: name }, { name: "file", filename: "a.csv", value: csv }])
      const viaField = await upload(server, f.tokens.api, "", field.body, field.type)
      expect([viaField.status, viaField.json.error.details[0].field]).toEqual([400, "filename"])
      const own = multipart([{ name: "entity", value: "contacts" }, { name: "file", filename: name, value: csv }])
      const viaPart = await upload(server, f.tokens.api, "", own.body, own.type)
      expect([viaPart.status, viaPart.json.error.details[0].field]).toEqual([400, "filename"])
      const fits = multipart([{ name: "entity", value: "contacts" }, { name: "file", filename: `${"n".repeat(251)}.csv`, value: csv }])
      expect((await upload(server, f.tokens.api, "", fits.body, fits.type)).json.data.filename).toHaveLength(255)
    })

    it("takes one file part and a few fields: a second file is 400, thousands of parts 413 without storing them", async () => {
      const two = multipart([
        { name: "entity", value: "contacts" },
        { name: "file", filename: "a.csv", value: "Denumire\nA\n" },
        { name: "file", filename: "b.csv", value: "Denumire\nB\n" }
      ])
      const second = await upload(server, f.tokens.api, "", two.body, two.type)
      expect([second.status, second.json.error.code]).toEqual([400, "validation_failed"])
      const other = multipart([{ name: "entity", value: "contacts" }, { name: "file", filename: "a.csv", value: "Denumire\nA\n" }, { name: "extra", filename: "b.csv", value: "x" }])
      expect((await upload(server, f.tokens.api, "", other.body, other.type)).status).toBe(400)
      // 20 000 file parts once became about 17 700 temporary files.
      const many = multipart([
        { name: "entity", value: "contacts" },
        ...Array.from({ length: 20_000 }, (_, i) => ({ name: "file", filename: `${i}.csv`, value: "Denumire\nA\n" }))
      ])
      const flood = await upload(server, f.tokens.api, "", many.body, many.type)
      expect([flood.status, flood.json.error.code]).toEqual([413, "payload_too_large"])
      const field = multipart([{ name: "entity", value: "contacts" }, { name: "mapping", value: "x".repeat(17 * 1024) }, { name: "file", filename: "a.csv", value: "Denumire\nA\n" }])
      expect((await upload(server, f.tokens.api, "", field.body, field.type)).status).toBe(413)
    })

    it("sends the errors CSV as an attachment with every formula-like cell written as text", async () => {
      const header = "=2+5+cmd|' /C calc'!A0"
      const job = await upload(server, f.tokens.api, `entity=contacts&mapping=${encodeURIComponent(JSON.stringify({ vat_number: header }))}`,
        `Denumire,"${header}"\nFirma,12345\n`, "text/csv")
      const response = await fetch(`${server.url}/v1/imports/${job.json.data.id}/errors?format=csv`, { headers: { authorization: `Bearer ${f.tokens.api}` } })
      expect(response.headers.get("content-disposition")).toBe(`attachment; filename="import-${job.json.data.id}-errors.csv"`)
      const text = await response.text()
      expect(text.split("\r\n")[1]).toMatch(/^1,'=2\+5\+cmd\|' \/C calc'!A0,/)
    })
  })
}

describe("a CSV cell this server writes", () => {
  it("starts with a quote when a spreadsheet would read it as a formula, and is quoted per RFC 4180", () => {
    for (const lead of ["=", "+", "-", "@", "\t", "\r"]) expect(csvCell(`${lead}1`).replace(/^"/, "")).toMatch(/^'/)
    expect(csvCell("-5")).toBe("'-5")
    expect(csvCell("=HYPERLINK(\"http://x\")")).toBe("\"'=HYPERLINK(\"\"http://x\"\")\"")
    expect(csvCell("a,b")).toBe("\"a,b\"")
    expect(csvCell(12)).toBe("12")
    expect(csvCell(null)).toBe("")
    expect(issuesCsv([{ row: 1, column: "@x", message: "+1" }])).toBe("row,column,message\r\n1,'@x,'+1\r\n")
  })
})
