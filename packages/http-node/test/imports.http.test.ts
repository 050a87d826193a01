import iconv from "iconv-lite"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

/** A partner list as SmartBill users bring it: Windows-1250, semicolons, cedilla ş ţ, decimal commas. */
const partnerList = (rows: ReadonlyArray<string>) =>
  iconv.encode(["Denumire;CIF/CNP;Reg. com.;Adresa;Localitate;Judet;Tara;Email;Telefon;Sold", ...rows].join("\r\n") + "\r\n", "windows-1250")

const upload = async (server: TestServer, token: string, query: string, body: Uint8Array | string, type = "text/csv") => {
  const response = await fetch(`${server.url}/v1/imports?${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": type },
    body: typeof body === "string" ? body : Buffer.from(body)
  })
  return { status: response.status, json: await response.json() as any }
}

const contactsNamed = async (server: TestServer, token: string) => {
  const list = await call(server, "GET", "/v1/contacts?perPage=100", { token })
  return list.json.data.map((c: any) => c.name).sort()
}

for (const db of testDatabases()) {
  describe(`/v1/imports over HTTP (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
    })
    afterAll(() => server.close())

    it("walks the newcomer's path: Windows-1250 partner list → preview → apply → diacritics → revert → gone", async () => {
      const file = partnerList([
        "Fabrica de Pâine Ştefan SRL;RO18547290;J40/1234/2020;Str. Ţepeş Vodă 3;Bucureşti;Bucureşti;RO;office@paine.ro;0722000111;1.234,56",
        "Transilvania Ţesături SA;14399840;J12/55/1998;Calea Turzii 10;Cluj-Napoca;Cluj;RO;;;12,50",
        "Fără CUI bun;12345;;;;;;;;0",
        "Rând cu prea multe;;;;;;;;;;extra"
      ])
      const created = await upload(server, f.tokens.api, "entity=contacts&preset=smartbill&filename=parteneri.csv", file)
      expect(created.status).toBe(201)
      const job = created.json.data
      expect(job).toMatchObject({
        status: "ready",
        entity: "contacts",
        preset: "smartbill",
        filename: "parteneri.csv",
        source: "upload",
        delimiter: ";",
        total_rows: 4,
        processed_rows: 4,
        error_count: 2,
        preview: { news: 2, updates: 0, skips: 0, errors: 2 }
      })
      // Windows-1250 and ISO-8859-2 write every Romanian letter with the same byte; either reading is right.
      expect(["windows-1250", "ISO-8859-2"]).toContain(job.encoding)
      expect(job.preview.samples.news[0].fields.name).toBe("Fabrica de Pâine Ștefan SRL")
      // Nothing is written before apply.
      expect(await contactsNamed(server, f.tokens.api)).toEqual([])

      const errors = await call(server, "GET", `/v1/imports/${job.id}/errors`, { token: f.tokens.api })
      expect(errors.json.data).toEqual([
        { row: 3, column: "CIF/CNP", message: expect.stringContaining("not a valid Romanian CUI") },
        { row: 4, column: null, message: expect.stringContaining("has 11 fields, the header has 10") }
      ])
      const csv = await fetch(`${server.url}/v1/imports/${job.id}/errors`, {
        headers: { authorization: `Bearer ${f.tokens.api}`, accept: "text/csv" }
      })
      expect(csv.headers.get("content-type")).toContain("text/csv")
      const csvText = await csv.text()
      expect(csvText.split("\r\n")[0]).toBe("row,column,message")
      expect(csvText).toContain("3,CIF/CNP,")

      const applied = await call(server, "POST", `/v1/imports/${job.id}/apply`, { token: f.tokens.api })
      expect(applied.status).toBe(200)
      expect(applied.json.data).toMatchObject({ status: "completed", imported_count: 2, updated_count: 0, skipped_count: 0, error_count: 2 })
      expect(await contactsNamed(server, f.tokens.api)).toEqual(["Fabrica de Pâine Ștefan SRL", "Transilvania Țesături SA"])
      const stefan = (await call(server, "GET", "/v1/contacts?vat_number=18547290", { token: f.tokens.api })).json.data[0]
      expect(stefan).toMatchObject({
        vat_number: "18547290",
        registration_number: "J40/1234/2020",
        address: "Str. Țepeș Vodă 3, București, București",
        email: "office@paine.ro"
      })
      // Applying twice is refused.
      expect((await call(server, "POST", `/v1/imports/${job.id}/apply`, { token: f.tokens.api })).status).toBe(409)

      const reverted = await call(server, "POST", `/v1/imports/${job.id}/revert`, { token: f.tokens.api })
      expect(reverted.status).toBe(200)
      expect(reverted.json.data.status).toBe("reverted")
      expect(reverted.json.data.reverted_at).not.toBeNull()
      expect(await contactsNamed(server, f.tokens.api)).toEqual([])

      const list = await call(server, "GET", "/v1/imports?perPage=5", { token: f.tokens.api })
      expect(list.json.data[0].id).toBe(job.id)
    })

    it("updates matched records, records their prior state, and refuses a revert after an edit (409)", async () => {
      const before = await call(server, "POST", "/v1/contacts", {
        token: f.tokens.api,
        body: { name: "Vechi SRL", kind: "customer", vat_number: "RO14399840", phone: "0700" }
      })
      expect(before.status).toBe(201)
      const file = "Name,VAT number,Phone\nNou SRL,14399840,0711\nVechi Doi,18547290,0700\n"
      const job = (await upload(server, f.tokens.api, "entity=contacts", file)).json.data
      expect(job.preview).toMatchObject({ news: 1, updates: 1, skips: 0, errors: 0 })
      expect(job.delimiter).toBe(",")
      expect(job.encoding).toBe("UTF-8")
      await call(server, "POST", `/v1/imports/${job.id}/apply`, { token: f.tokens.api })
      const updated = await call(server, "GET", `/v1/contacts/${before.json.data.id}`, { token: f.tokens.api })
      expect(updated.json.data).toMatchObject({ name: "Nou SRL", phone: "0711" })
      // Someone edits the updated contact: the revert would lose that edit.
      await call(server, "PATCH", `/v1/contacts/${before.json.data.id}`, { token: f.tokens.api, body: { phone: "0799" } })
      const refused = await call(server, "POST", `/v1/imports/${job.id}/revert`, { token: f.tokens.api })
      expect(refused.status).toBe(409)
      expect(refused.json.error.code).toBe("conflict")
      expect((await call(server, "GET", `/v1/imports/${job.id}`, { token: f.tokens.api })).json.data.status).toBe("completed")
      expect((await call(server, "GET", `/v1/contacts/${before.json.data.id}`, { token: f.tokens.api })).json.data.phone).toBe("0799")
    })

    it("imports locations (tab, UTF-8 BOM), vehicles (ISO-8859-2) and expenses (decimal comma, dd.mm.yyyy) and reverts each to the tables as they were", async () => {
      const cases = [
        { entity: "locations", list: "/v1/locations", body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("Cod\tDenumire\tTip\nDEP-1\tDepozit Ploiești\tdepozit\nMAG-2\tMagazin Iaşi\tmagazin\n")]), delimiter: "\t", encoding: "UTF-8" },
        { entity: "fleet_vehicles", list: "/v1/fleet-vehicles", body: iconv.encode("Nr. înmatriculare;Marca;Combustibil;Sarcina utila\nB 123 ABC;Dacia;motorină;1.250,5\nCJ-12-XYZ;Ford;benzină;800\n", "ISO-8859-2"), delimiter: ";", encoding: "ISO-8859-2" },
        { entity: "expenses", list: "/v1/expenses", body: iconv.encode("Nr. document;Descriere;Categorie;Suma;Moneda;Data\nF-1;Motorină Ploieşti;combustibil;1.234,56;RON;05.03.2026\nF-2;Chirie martie;chirie;2500;RON;2026-03-01\n", "windows-1250"), delimiter: ";", encoding: "windows-1250" }
      ]
      for (const c of cases) {
        const before = (await call(server, "GET", `${c.list}?perPage=100`, { token: f.tokens.api })).json.data
        const job = (await upload(server, f.tokens.api, `entity=${c.entity}`, c.body)).json.data
        expect(job, c.entity).toMatchObject({ status: "ready", delimiter: c.delimiter, preview: { news: 2, errors: 0 } })
        expect(c.encoding === "UTF-8" ? [c.encoding] : ["windows-1250", "ISO-8859-2"]).toContain(job.encoding)
        const applied = (await call(server, "POST", `/v1/imports/${job.id}/apply`, { token: f.tokens.api })).json.data
        expect(applied.imported_count, c.entity).toBe(2)
        const during = (await call(server, "GET", `${c.list}?perPage=100`, { token: f.tokens.api })).json.data
        expect(during.length).toBe(before.length + 2)
        if (c.entity === "expenses") {
          expect(during.find((e: any) => e.description === "Motorină Ploiești")).toMatchObject({ amount: "1234.56", expense_date: "2026-03-05", category: "fuel" })
        }
        if (c.entity === "fleet_vehicles") {
          expect(during.find((v: any) => v.plate === "B123ABC")).toMatchObject({ fuel_type: "diesel", capacity_kg: 1250.5 })
        }
        expect((await call(server, "POST", `/v1/imports/${job.id}/revert`, { token: f.tokens.api })).status).toBe(200)
        expect((await call(server, "GET", `${c.list}?perPage=100`, { token: f.tokens.api })).json.data).toEqual(before)
      }
    })

    it("reads the SoftPro layout from a multipart form", async () => {
      const form = new FormData()
      form.append("entity", "contacts")
      form.append("preset", "softpro")
      form.append("file", new Blob(["cod_par,rrr_par,den_par,reg_com_p,jud_par,loc_adr,adr_par,tara_adr\n18547290,RO,Softpro Client SRL,J40/1/2020,Ilfov,Voluntari,Str. Mare 1,RO\n"]), "parteneri.csv")
      const response = await fetch(`${server.url}/v1/imports`, { method: "POST", headers: { authorization: `Bearer ${f.tokens.sandbox}` }, body: form })
      const body = await response.json() as any
      expect(response.status).toBe(201)
      expect(body.data).toMatchObject({ source: "multipart", preset: "softpro", filename: "parteneri.csv", preview: { news: 1, errors: 0 } })
      expect(body.data.columns).toMatchObject({ name: "den_par", vat_number: "cod_par", city: "loc_adr" })
    })

    it("describes both upload bodies in the OpenAPI document: text/csv and multipart with a file part", async () => {
      const doc = await (await fetch(`${server.url}/v1/openapi.json`)).json() as any
      const body = doc.paths["/v1/imports"].post.requestBody
      expect(Object.keys(body.content).sort()).toEqual(["multipart/form-data", "text/csv"])
      expect(body.content["text/csv"].schema.type).toBe("string")
      const form = body.content["multipart/form-data"].schema
      expect(form.properties.file).toMatchObject({ type: "string", format: "binary" })
      expect(form.required).toEqual(["file"])
      expect(form.properties.entity.enum).toEqual(["contacts", "expenses", "locations", "fleet_vehicles"])
    })

    it("answers bad input clearly and leaves the tables untouched", async () => {
      const before = await contactsNamed(server, f.tokens.api)
      const empty = await upload(server, f.tokens.api, "entity=contacts", "")
      expect(empty.json.data ?? empty.json.error).toMatchObject(empty.status === 201 ? { status: "failed", failure: { code: "empty_file" } } : { code: expect.any(String) })
      const binary = await upload(server, f.tokens.api, "entity=contacts", new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 1, 2, 3]))
      expect(binary.json.data).toMatchObject({ status: "failed", failure: { code: "binary_file" } })
      const unknown = await upload(server, f.tokens.api, "entity=contacts", "foo,bar\n1,2\n")
      expect(unknown.json.data).toMatchObject({ status: "failed", failure: { code: "no_known_column" } })
      const mapped = await upload(server, f.tokens.api, `entity=contacts&mapping=${encodeURIComponent(JSON.stringify({ name: "foo" }))}`, "foo,bar\nMapat SRL,2\n")
      expect(mapped.json.data).toMatchObject({ status: "ready", columns: { name: "foo" }, preview: { news: 1 } })
      const noEntity = await upload(server, f.tokens.api, "", "Denumire\nX\n")
      expect(noEntity.status).toBe(400)
      expect(noEntity.json.error.code).toBe("validation_failed")
      const json = await upload(server, f.tokens.api, "entity=contacts", "{}", "application/json")
      expect(json.status).toBe(415)
      const tooLarge = await fetch(`${server.url}/v1/imports?entity=contacts`, {
        method: "POST",
        headers: { authorization: `Bearer ${f.tokens.api}`, "content-type": "text/csv", "content-length": String(60 * 1024 * 1024) },
        body: "Denumire\n"
      }).catch(() => undefined)
      if (tooLarge !== undefined) expect(tooLarge.status).toBe(413)
      expect((await upload(server, f.tokens.narrow, "entity=contacts", "Denumire\nX\n")).status).toBe(403)
      expect(await contactsNamed(server, f.tokens.api)).toEqual(before)
      // Another organization's or environment's job is not found.
      const other = (await call(server, "GET", "/v1/imports?perPage=1", { token: f.tokens.api })).json.data[0]
      expect((await call(server, "GET", `/v1/imports/${other.id}`, { token: f.tokens.sandbox })).status).toBe(404)
    })
  })
}
