import { describe, expect, it } from "vitest"
import { testDatabases } from "./support/databases.ts"
import { receiverCertificateFile } from "./support/receiver.ts"
import { serverWithReceiver } from "./support/receiving.ts"
import { subscribe, useTestWebhookSettings } from "./support/webhooks.ts"

useTestWebhookSettings({ stepMs: 300, timeoutMs: 1_500, caFile: receiverCertificateFile })

for (const db of testDatabases()) {
  describe(`court cases over HTTP (${db.name})`, () => {
    const ctx = serverWithReceiver(db)
    const request = ctx.request

    it("keeps a case with its parties as written, one per file number, and removes its hearings with it", async () => {
      const parties = [{ name: "Întreprinderea Ţară SRL", role: "reclamant" }, { name: "Ştefan Ăstrădoaie", role: "pârât" }]
      const made = await request("POST", "/v1/court-cases", {
        number: "3597/3/2014**/a1.2",
        court: "Tribunalul București",
        subject: "pretenții",
        parties,
        panel: "C5"
      })
      expect(made.status, made.text).toBe(201)
      expect(made.json.data).toMatchObject({ number: "3597/3/2014**/a1.2", parties, status: "open", notes: null })
      const id = made.json.data.id
      expect((await request("GET", `/v1/court-cases/${id}`)).json).toEqual(made.json)
      const twin = await request("POST", "/v1/court-cases", { number: "3597 / 3 / 2014** / A1.2", court: "Alta" })
      expect([twin.status, twin.json.error.message]).toEqual([409, "Another court case of the organization already has this file number"])
      const sandbox = await request("POST", "/v1/court-cases", { number: "3597/3/2014**/a1.2", court: "Alta" }, ctx.f.tokens.sandbox)
      expect(sandbox.status).toBe(201)

      const last = await request("POST", `/v1/court-cases/${id}/hearings`, { hearing_date: "9999-12-31" })
      expect(last.json.data).toMatchObject({ hearing_date: "9999-12-31", court: "Tribunalul București", panel: null })
      const patched = await request("PATCH", `/v1/court-cases/${id}/hearings/${last.json.data.id}`, { hearing_date: "2026-06-01", panel: "C9" })
      expect(patched.json.data).toMatchObject({ hearing_date: "2026-06-01", panel: "C9" })
      expect((await request("GET", `/v1/court-cases/${id}/hearings`)).json.data).toEqual([patched.json.data])
      expect((await request("DELETE", `/v1/court-cases/${id}`)).json).toEqual({ data: { id, deleted: true }, error: null })
      expect((await request("GET", `/v1/court-cases/${id}/hearings`)).status).toBe(404)
      expect((await request("PATCH", `/v1/court-cases/${id}/hearings/${last.json.data.id}`, { panel: "C1" })).status).toBe(404)
    })

    it("each added hearing reaches the subscriber once, with its id, case, date and court only", async () => {
      const sub = await subscribe(ctx.server, ctx.f.tokens.api, ctx.receiver.url, ["court_case.hearing_added"])
      ctx.receiver.secrets = [sub.secret]
      const courtCase = (await request("POST", "/v1/court-cases", {
        number: "88/2/2026",
        court: "Curtea de Apel București",
        parties: [{ name: "Gamma SRL", role: "apelant" }],
        panel: "Completul 3",
        notes: "Dosar sensibil"
      })).json.data
      const first = (await request("POST", `/v1/court-cases/${courtCase.id}/hearings`, { hearing_date: "2026-04-15", solution: "Amână" })).json.data
      const second = (await request("POST", `/v1/court-cases/${courtCase.id}/hearings`, {
        hearing_date: "2026-05-20",
        court: "Înalta Curte de Casaţie şi Justiţie",
        notes: "Recurs"
      })).json.data
      // Editing a hearing publishes nothing.
      await request("PATCH", `/v1/court-cases/${courtCase.id}/hearings/${first.id}`, { solution: "Admite apelul" })
      const ids = [`evt_court_hearing_${first.id}`, `evt_court_hearing_${second.id}`]
      await ctx.receiver.until((all) => ids.every((id) => all.some((r) => r.headers["webhook-id"] === id)))
      expect(ctx.receiver.rejected).toEqual([])
      const ours = ctx.receiver.received.filter((r) => JSON.parse(r.body).data.case_id === courtCase.id)
      expect(ours.map((r) => r.headers["webhook-id"]).sort()).toEqual([...ids].sort())
      const data = (eventId: string) => JSON.parse(ours.find((r) => r.headers["webhook-id"] === eventId)!.body).data
      expect(data(ids[0]!)).toEqual({
        id: first.id,
        case_id: courtCase.id,
        hearing_date: "2026-04-15",
        court: "Curtea de Apel București",
        organizationId: ctx.f.organizationId
      })
      expect(data(ids[1]!)).toEqual({
        id: second.id,
        case_id: courtCase.id,
        hearing_date: "2026-05-20",
        court: "Înalta Curte de Casaţie şi Justiţie",
        organizationId: ctx.f.organizationId
      })
    })

    it("asks for court:read to read and court:write to change", async () => {
      const read = await request("GET", "/v1/court-cases", undefined, ctx.f.tokens.narrow)
      expect([read.status, read.headers.get("www-authenticate")]).toEqual([403, expect.stringContaining(`scope="court:read"`)])
      const write = await request("POST", "/v1/court-cases", { number: "1/1/2026", court: "ÎCCJ" }, ctx.f.tokens.narrow)
      expect([write.status, write.headers.get("www-authenticate")]).toEqual([403, expect.stringContaining(`scope="court:write"`)])
    })
  })
}
