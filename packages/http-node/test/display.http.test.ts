import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, shiftedClock, startTestServer, type TestServer } from "./support/server.ts"

/** Wednesday 18 March 2026, 10:00 in Bucharest: the server's clock for these tests (it moves only when told). */
const NOW = Date.UTC(2026, 2, 18, 8, 0, 0)

for (const db of testDatabases()) {
  describe(`wall displays over HTTP (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    const clock = shiftedClock()
    beforeAll(async () => {
      clock.advance(NOW - Date.now())
      server = await startTestServer(db.choice(), { clock: clock.clock, fastHashing: true })
      f = await seedFixture(server)
      await seedInvoices()
    }, 120_000)
    afterAll(() => server.close())

    const api = (method: string, path: string, body?: unknown, token = f.tokens.api) =>
      call(server, method, path, { token, ...(body !== undefined ? { body } : {}) })
    const ok = async (method: string, path: string, body?: unknown, token = f.tokens.api, status = 200) => {
      const res = await api(method, path, body, token)
      expect(res.status, res.text).toBe(status)
      return res.json.data
    }
    /** A fresh device with a PIN; returns its id and token. */
    const device = async (pin = "482913", extra: Record<string, unknown> = {}) => {
      const made = await ok("POST", "/v1/display/devices", { name: "Front desk", ...extra }, f.tokens.api, 201)
      await ok("PUT", `/v1/display/devices/${made.device.id}/pin`, { pin })
      return { id: made.device.id as string, token: made.token as string }
    }
    const unlock = (token: string, pin: string) => api("POST", "/v1/display/unlock", { pin }, token)
    const ask = (token: string, body: Record<string, unknown>) => api("POST", "/v1/display/assistant", body, token)

    /**
     * The figures the assistant reads, entered through the API, in Bucharest's March 2026:
     * - #1 1000.00 RON, issued 2 March, due 9 March, unpaid (overdue);
     * - #2 2500.00 RON, issued 5 March, due 30 April, 1234.56 paid on 10 March;
     * - #3 100.00 EUR at 5 RON, issued 10 February, due 25 February, 40 EUR (200.00 RON) paid on 17 March (overdue: 300.00 RON);
     * - #4 500.00 RON, issued 1 February, paid in full on 20 February.
     * Collected in March: 1434.56 RON from 2 payments. Overdue: 2 invoices, 1300.00 RON.
     */
    const seedInvoices = async () => {
      await ok("PATCH", "/v1/organization", { time_zone: "Europe/Bucharest" })
      const contact = await ok("POST", "/v1/contacts", { name: "Client SRL", kind: "customer" }, f.tokens.api, 201)
      const invoice = async (currency: string, price: string, issue: Record<string, string>) => {
        const draft = await ok("POST", "/v1/invoices", {
          contact_id: contact.id,
          currency,
          lines: [{ description: "Services", quantity: "1", unit_price: price, vat_rate: 0 }]
        }, f.tokens.api, 201)
        await ok("POST", `/v1/invoices/${draft.id}/issue`, { series: "DSP", ...issue })
        return draft.id as string
      }
      const pay = (id: string, amount: string, payment_date: string) =>
        ok("POST", `/v1/invoices/${id}/payments`, { amount, payment_date, method: "BANK_TRANSFER" }, f.tokens.api, 201)
      await invoice("RON", "1000.00", { issue_date: "2026-03-02", due_date: "2026-03-09" })
      const second = await invoice("RON", "2500.00", { issue_date: "2026-03-05", due_date: "2026-04-30" })
      const third = await invoice("EUR", "100.00", { issue_date: "2026-02-10", due_date: "2026-02-25", exchange_rate_ron: "5" })
      const fourth = await invoice("RON", "500.00", { issue_date: "2026-02-01", due_date: "2026-02-15" })
      await pay(second, "1234.56", "2026-03-10")
      await pay(third, "40.00", "2026-03-17")
      await pay(fourth, "500.00", "2026-02-20")
    }

    it("Done when: create a device, set a PIN, unlock, meet the 429 on the sixth wrong PIN, ask two questions", async () => {
      const created = await ok("POST", "/v1/display/devices", { name: "Front desk" }, f.tokens.api, 201)
      expect(created.token).toMatch(/^svc_dt_[A-Za-z0-9_-]{43}$/)
      expect(created.scopes).toEqual(["display:read", "display:assistant"])
      expect(created.device).toMatchObject({ name: "Front desk", locale: "ro", pin_set: false, unlock_disabled: false, location_id: null })
      const { id } = created.device
      const token: string = created.token

      const noPin = await unlock(token, "482913")
      expect(noPin.status).toBe(400)
      expect(noPin.json.error.code).toBe("pin_not_set")

      const withPin = await api("PUT", `/v1/display/devices/${id}/pin`, { pin: "482913" })
      expect(withPin.status).toBe(200)
      expect(withPin.json.data.pin_set).toBe(true)
      expect(withPin.text).not.toContain("482913")

      expect((await unlock(token, "482913")).json).toEqual({ data: { ok: true, retryAfterSec: 0 }, error: null })

      // A minute later the right PIN has left the window: six wrong ones meet the limit at the sixth.
      clock.advance(61_000)
      const wrong = []
      for (let i = 0; i < 6; i++) wrong.push(await unlock(token, `11110${i}`))
      expect(wrong.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429])
      expect(wrong.slice(0, 4).map((r) => r.json.data)).toEqual(Array(4).fill({ ok: false, retryAfterSec: 0 }))
      // The fifth wrong PIN used the last attempt of the window: it says how long to wait (until the
      // first of the five leaves the window, a minute after it, less the moments the checks took).
      expect(wrong[4]!.json.data.ok).toBe(false)
      expect(wrong[4]!.json.data.retryAfterSec).toBeGreaterThanOrEqual(55)
      expect(wrong[4]!.json.data.retryAfterSec).toBeLessThanOrEqual(60)
      const refused = wrong[5]!
      const wait = refused.json.error.retryAfterSec
      expect(refused.json).toMatchObject({ data: null, error: { code: "rate_limited" } })
      expect(wait).toBeGreaterThanOrEqual(55)
      expect(wait).toBeLessThanOrEqual(60)
      expect(refused.headers.get("retry-after")).toBe(String(wait))
      expect(refused.headers.get("ratelimit-policy")).toBe(`"unlock";q=5;w=60`)
      expect(refused.headers.get("ratelimit")).toBe(`"unlock";r=0;t=${wait}`)
      // Even the right PIN waits for the window to slide.
      expect((await unlock(token, "482913")).status).toBe(429)

      const collected = await ask(token, { text: "cât am încasat luna asta?" })
      expect(collected.status, collected.text).toBe(200)
      expect(collected.json.data).toEqual({
        transcript: "cât am încasat luna asta?",
        answer: "Luna aceasta ați încasat 1.434,56 lei din 2 plăți.",
        kpi: {
          id: "collected_month",
          labelKey: "pulse.collected_month",
          label: "Încasat luna aceasta",
          value: { minor: 143456, currency: "RON" },
          count: 2,
          delta: 143456 - 50000,
          spark: [0, 0, 0, 0, 0, 50000, 143456],
          tone: "positive",
          unit: "money"
        }
      })
      const overdue = await ask(token, { text: "how many invoices are overdue?", locale: "en" })
      expect(overdue.status, overdue.text).toBe(200)
      expect(overdue.json.data).toEqual({
        transcript: "how many invoices are overdue?",
        answer: "2 invoices are overdue, totalling RON 1,300.00.",
        kpi: {
          id: "invoices_overdue",
          labelKey: "pulse.invoices_overdue",
          label: "Overdue invoices",
          value: { minor: 130000, currency: "RON" },
          count: 2,
          // By the week each fell due: #3 in the week of 23 February, #1 in the week of 9 March; none this week.
          delta: -100000,
          spark: [0, 0, 0, 30000, 0, 100000, 0],
          tone: "warning",
          unit: "money"
        }
      })

      // Every attempt is in the audit log, with the device and the request id, never a PIN.
      const audit = await api("GET", `/v1/audit-events?action=display.unlock&device_id=${id}&perPage=100`)
      expect(audit.status).toBe(200)
      const results = audit.json.data.map((e: any) => [e.outcome, e.details.result]).reverse()
      expect(results).toEqual([
        ["denied", "pin_not_set"],
        ["success", "ok"],
        ...Array(5).fill(["failure", "wrong_pin"]),
        ["denied", "rate_limited"],
        ["denied", "rate_limited"]
      ])
      for (const e of audit.json.data) {
        expect(e).toMatchObject({ device_id: id, resource_type: "device", resource_id: id, actor_organization_id: f.organizationId })
        expect(e.request_id).toMatch(/^req_/)
        expect(e.actor_credential_id).toEqual(created.credential_id)
      }
      expect(audit.text).not.toMatch(/482913|11110\d/)
      const firstRow = audit.json.data.at(-1)
      expect(firstRow.request_id).toBe(noPin.headers.get("x-request-id"))
      // The questions are audited too, and nothing else was written.
      const questions = await api("GET", `/v1/audit-events?action=display.assistant&device_id=${id}`)
      expect(questions.json.data.map((e: any) => e.details.kpi)).toEqual(["invoices_overdue", "collected_month"])
    })

    it("unlocks only with a device token: personal tokens, API keys and malformed PINs are refused and audited", async () => {
      const personal = await unlock(f.tokens.personal, "1234")
      expect(personal.status).toBe(400)
      expect(personal.json.error.code).toBe("personal_token_not_allowed")
      const key = await unlock(f.tokens.api, "1234")
      expect(key.status).toBe(400)
      expect(key.json.error.code).toBe("device_token_required")
      const d = await device()
      for (const pin of ["123", "123456789", "12a4", "", 1234]) {
        const res = await unlock(d.token, pin as string)
        expect(res.status, String(pin)).toBe(400)
        expect(res.json.error.code).toBe("validation_failed")
        expect(res.json.error.details.map((x: any) => x.field)).toEqual(["pin"])
      }
      expect((await api("POST", "/v1/display/unlock", { pin: "1234", extra: 1 }, d.token)).status).toBe(400)
      // The bounds themselves: 4 and 8 digits.
      for (const pin of ["0000", "12345678"]) {
        await ok("PUT", `/v1/display/devices/${d.id}/pin`, { pin })
        expect((await unlock(d.token, pin)).json.data, pin).toEqual({ ok: true, retryAfterSec: 0 })
      }
      // Idempotency-Key is ignored: each attempt is checked, and no fingerprint of a PIN is stored.
      const keyed = () =>
        call(server, "POST", "/v1/display/unlock", { token: d.token, body: { pin: "5555" }, headers: { "idempotency-key": "pin-try" } })
      const [first, second] = [await keyed(), await keyed()]
      expect([first.json.data.ok, second.json.data.ok, second.headers.get("idempotent-replayed")]).toEqual([false, false, null])
      const stored = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'pin-try'`))
      expect(stored[0]!.n).toBe(0)
      // The refusals of the wrong credentials are in the log with the credential's kind, and no device.
      const since = new Date(NOW).toISOString()
      const log = await api("GET", `/v1/audit-events?action=display.unlock&from=${encodeURIComponent(since)}&perPage=100`)
      const refusals = log.json.data.filter((e: any) => e.device_id === null).map((e: any) => [e.details.result, e.details.credential_kind])
      expect(refusals).toEqual(expect.arrayContaining([
        ["personal_token_not_allowed", "personal"],
        ["device_token_required", "api_key"]
      ]))
      // A window that ends before them finds none of them.
      const before = await api("GET", `/v1/audit-events?action=display.unlock&to=${encodeURIComponent(since)}`)
      expect(before.json.data).toEqual([])
    })

    it("disables unlocking after 10 wrong PINs in a row (423) until a manager sets a new PIN", async () => {
      const d = await device("2468")
      const statuses: Array<number> = []
      for (let batch = 0; batch < 2; batch++) {
        for (let i = 0; i < 5; i++) statuses.push((await unlock(d.token, "9999")).status)
        clock.advance(60_000)
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 423])
      const locked = await unlock(d.token, "2468")
      expect(locked.status).toBe(423)
      expect(locked.json.error.code).toBe("unlock_disabled")
      expect((await ok("GET", `/v1/display/devices/${d.id}`)).unlock_disabled).toBe(true)
      // A new PIN lifts it.
      const reset = await ok("PUT", `/v1/display/devices/${d.id}/pin`, { pin: "13579" })
      expect(reset.unlock_disabled).toBe(false)
      expect((await unlock(d.token, "13579")).json.data).toEqual({ ok: true, retryAfterSec: 0 })
      // A right PIN ends a run of wrong ones: nine wrong, one right, nine wrong again stay unlocked.
      clock.advance(60_000)
      for (let i = 0; i < 4; i++) await unlock(d.token, "0000")
      expect((await unlock(d.token, "13579")).json.data.ok).toBe(true)
      clock.advance(60_000)
      for (let i = 0; i < 5; i++) expect((await unlock(d.token, "0000")).status).toBe(200)
      clock.advance(60_000)
      for (let i = 0; i < 4; i++) expect((await unlock(d.token, "0000")).status).toBe(200)
      expect((await unlock(d.token, "13579")).json.data.ok).toBe(true)
    })

    it("the assistant: text or audio, each limit at its bound and one past it, 20 questions a minute", async () => {
      const d = await device()
      const status = async (body: Record<string, unknown>) => {
        const res = await ask(d.token, body)
        return [res.status, res.json.error?.code ?? null]
      }
      // 500 characters counted as characters: 500 emoji are 1000 UTF-16 units.
      expect(await status({ text: "💶".repeat(500) })).toEqual([200, null])
      expect(await status({ text: "💶".repeat(501) })).toEqual([400, "validation_failed"])
      expect(await status({ text: "a".repeat(500) })).toEqual([200, null])
      expect(await status({ text: "   " })).toEqual([400, "validation_failed"])
      expect(await status({ text: "" })).toEqual([400, "validation_failed"])
      expect(await status({})).toEqual([400, "validation_failed"])
      expect(await status({ text: "azi", audio: "AAAA" })).toEqual([400, "validation_failed"])
      expect(await status({ text: "azi", locale: "de" })).toEqual([400, "validation_failed"])
      // Audio: valid base64 up to 400000 characters and a mime type up to 40 is understood, then 501.
      expect(await status({ audio: "A".repeat(400_000), mime: "a".repeat(40) })).toEqual([501, "STT_UNAVAILABLE"])
      expect(await status({ audio: "A".repeat(400_004) })).toEqual([400, "validation_failed"])
      expect(await status({ audio: "AAAA", mime: "a".repeat(41) })).toEqual([400, "validation_failed"])
      expect(await status({ audio: "not base64!" })).toEqual([400, "validation_failed"])
      // A question it cannot place: what it can answer, and no KPI.
      const unknown = await ask(d.token, { text: "what's the weather like?", locale: "en" })
      expect(unknown.json.data.kpi).toBeNull()
      expect(unknown.json.data.answer).toContain("I can answer about")
      // Four questions went through so far (three texts and the audio); sixteen more reach the limit.
      for (let i = 0; i < 15; i++) expect((await ask(d.token, { text: "sold de încasat" })).status).toBe(200)
      const twentieth = await ask(d.token, { text: "sold de incasat" })
      expect(twentieth.status).toBe(200)
      expect(twentieth.json.data.kpi.id).toBe("open_balance")
      const refused = await ask(d.token, { text: "sold de incasat" })
      expect(refused.status).toBe(429)
      expect(refused.json.error.code).toBe("rate_limited")
      expect(refused.headers.get("retry-after")).toBe(String(refused.json.error.retryAfterSec))
      expect(refused.headers.get("ratelimit-policy")).toBe(`"assistant";q=20;w=60`)
      // The device's locale answers when the question names none.
      const english = await device("5555", { locale: "en" })
      expect((await ask(english.token, { text: "cât am încasat luna asta?" })).json.data.answer).toBe(
        "You collected RON 1,434.56 this month from 2 payments."
      )
    })

    it("keeps only a salted Argon2id hash of each PIN: one PIN on two devices gives two hashes", async () => {
      const a = await device("314159")
      const b = await device("314159")
      const rows = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ readonly id: string; readonly pin_hash: string }>`SELECT id, pin_hash FROM devices WHERE id IN (${a.id}, ${b.id})`))
      expect(rows.length).toBe(2)
      for (const r of rows) {
        expect(r.pin_hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
        expect(r.pin_hash).not.toContain("314159")
      }
      expect(rows[0]!.pin_hash).not.toBe(rows[1]!.pin_hash)
      // The device resource never shows it.
      expect(JSON.stringify(await ok("GET", `/v1/display/devices/${a.id}`))).not.toContain("argon2")
    })

    it("manages devices: list, get, patch, location, rotate the token, clear the PIN, delete", async () => {
      const location = await ok("POST", "/v1/locations", { name: "Lobby" }, f.tokens.api, 201)
      const made = await ok("POST", "/v1/display/devices", {
        name: " Hall ",
        location_id: location.id,
        locale: "en",
        scopes: ["display:assistant"]
      }, f.tokens.api, 201)
      expect(made.device).toMatchObject({ name: "Hall", location_id: location.id, locale: "en" })
      expect(made.scopes).toEqual(["display:assistant"])
      const id = made.device.id
      // A token without display:read cannot unlock.
      expect((await unlock(made.token, "1234")).status).toBe(403)
      const unknownLocation = await api("POST", "/v1/display/devices", { name: "X", location_id: "00000000-0000-4000-8000-00000000dead" })
      expect(unknownLocation.status).toBe(404)
      expect((await api("POST", "/v1/display/devices", { name: "X", scopes: ["locations:read"] })).status).toBe(400)
      const listed = await api("GET", `/v1/display/devices?location_id=${location.id}`)
      expect(listed.json.data.map((d: any) => d.id)).toEqual([id])
      expect((await ok("PATCH", `/v1/display/devices/${id}`, { name: "Hall 2", location_id: null })).location_id).toBeNull()
      expect(await ok("GET", `/v1/display/devices/${id}`)).toMatchObject({ name: "Hall 2", locale: "en", pin_set: false })
      // Rotation: the old token stops working, the new one keeps the scopes.
      const rotated = await ok("POST", `/v1/display/devices/${id}/rotate-token`, {})
      expect(rotated.scopes).toEqual(["display:assistant"])
      expect(rotated.token).not.toBe(made.token)
      expect((await ask(made.token, { text: "azi" })).status).toBe(401)
      expect((await ask(rotated.token, { text: "cât am facturat azi?" })).status).toBe(200)
      const widened = await ok("POST", `/v1/display/devices/${id}/rotate-token`, { scopes: ["display:read", "display:assistant"] })
      expect(widened.scopes).toEqual(["display:read", "display:assistant"])
      await ok("PUT", `/v1/display/devices/${id}/pin`, { pin: "7777" })
      expect((await ok("DELETE", `/v1/display/devices/${id}/pin`)).pin_set).toBe(false)
      expect((await unlock(widened.token, "7777")).json.error.code).toBe("pin_not_set")
      expect((await api("PUT", `/v1/display/devices/${id}/pin`, { pin: "12" })).status).toBe(400)
      // Another environment does not see it.
      expect((await api("GET", `/v1/display/devices/${id}`, undefined, f.tokens.sandbox)).status).toBe(404)
      // Deleting revokes its token.
      expect(await ok("DELETE", `/v1/display/devices/${id}`)).toEqual({ id, deleted: true })
      expect((await api("GET", `/v1/display/devices/${id}`)).status).toBe(404)
      expect((await ask(widened.token, { text: "azi" })).status).toBe(401)
    })
  })
}
