import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Contacts, Events, FiscalMonitor, Identifiers, Invoices, type Tenant, Transactor } from "@opsplatform/core"
import { type FakeAnaf, startFakeAnaf } from "@opsplatform/testing/fakeAnaf"
import type { Fixture } from "@opsplatform/testing"
import { openCore } from "./support/core.ts"
import { testDatabases } from "./support/databases.ts"
import { receiverCertificateFile, type Receiver, startReceiver } from "./support/receiver.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"
import { eventually, subscribe, useTestWebhookSettings } from "./support/webhooks.ts"

useTestWebhookSettings({ stepMs: 300, timeoutMs: 1_500, caFile: receiverCertificateFile })

const DAY_MS = 86_400_000

let nextBody = 40_000_000 + Math.floor(Math.random() * 5_000_000) * 10
/** Fresh valid CUIs (control digit computed), distinct across the run. */
const freshCuis = (n: number) =>
  Array.from({ length: n }, () => {
    const body = String(nextBody++)
    return body + String(Identifiers.cuiControlDigit(body))
  })

/**
 * The registry the server asks: the fake, retrying once quickly, a request failing after half a second,
 * and 20 requests a second (ANAF's own pacing, one a second, is tested once, on a server of its own).
 */
const anafEnv = (fake: FakeAnaf, requestsPerSecond = "20") => ({
  OPSPLATFORM_ANAF_URL: fake.url,
  OPSPLATFORM_ANAF_RETRIES: "1",
  OPSPLATFORM_ANAF_RETRY_BASE_MS: "50",
  OPSPLATFORM_ANAF_TIMEOUT_MS: "500",
  OPSPLATFORM_ANAF_REQUESTS_PER_SECOND: requestsPerSecond
})

/** Customers with one open RON invoice each, made through core in one transaction (faster than the API for many). */
const customersMade = (tenant: Tenant.Tenant, cuis: ReadonlyArray<string>, amount: string) =>
  Effect.flatMap(Transactor.Transactor, (tx) => tx.withTransaction(Effect.gen(function*() {
    const contacts = yield* Contacts.Contacts
    const invoices = yield* Invoices.Invoices
    const made: Array<{ readonly id: string; readonly cui: string }> = []
    for (const cui of cuis) {
      const contact = yield* contacts.create(tenant, { name: `Client ${cui}`, kind: "customer", vat_number: `RO${cui}` })
      const draft = yield* invoices.create(tenant, {
        contact_id: contact.id,
        currency: "RON",
        lines: [{ description: "Services", quantity: "1", unit_price: amount, vat_rate: 0 }]
      })
      yield* invoices.issue(tenant, draft.id, { series: "FCT" })
      made.push({ id: contact.id, cui })
    }
    return made
  }))).pipe(Effect.orDie)

const gaps = (times: ReadonlyArray<number>) => times.slice(1).map((t, i) => t - times[i]!)

for (const db of testDatabases()) {
  describe(`the fiscal status check over HTTP, against a fake ANAF (${db.name})`, () => {
    let fake: FakeAnaf
    let server: TestServer
    let f: Fixture
    beforeAll(async () => {
      fake = await startFakeAnaf()
      server = await startTestServer(db.choice(), { env: anafEnv(fake) })
      f = await seedFixture(server)
    })
    afterAll(async () => {
      await server.close()
      await fake.close()
    })

    const api = (method: string, path: string, body?: unknown, token = f.tokens.api) =>
      call(server, method, path, { token, ...(body === undefined ? {} : { body }) })

    const customers = (tenant: Tenant.Tenant, cuis: ReadonlyArray<string>, amount = "100") => server.run(customersMade(tenant, cuis, amount))

    const passAt = (epochMs: number, organizationId: string) =>
      server.run(Effect.flatMap(FiscalMonitor.FiscalMonitor, (m) => m.runAt(epochMs, { organizationId })))

    it("shows the last status on the contact and every distinct status in its history", async () => {
      const org = await seedFixture(server)
      const [cui] = freshCuis(1)
      fake.set(cui!)
      const [contact] = await customers(org.live, [cui!])
      const before = await api("GET", `/v1/contacts/${contact!.id}`, undefined, org.tokens.api)
      expect(before.json.data).toMatchObject({ fiscal_status: null, fiscal_checked_at: null })
      const summary = await passAt(Date.now(), org.organizationId)
      expect([summary.checked, summary.baselines, summary.events]).toEqual([1, 1, []])

      const shown = (await api("GET", `/v1/contacts/${contact!.id}`, undefined, org.tokens.api)).json.data
      expect(shown.fiscal_status).toEqual({
        cui,
        inactive: { status: false, effective_date: null },
        struck_off: { status: false, effective_date: null },
        insolvency: { status: false, effective_date: null },
        vat_registered: { status: true, effective_date: "2015-03-01" },
        cash_vat: { status: false, effective_date: null }
      })
      expect(Date.parse(shown.fiscal_checked_at)).toBeGreaterThan(Date.now() - 60_000)
      // Editing the contact keeps what the check wrote.
      const renamed = await api("PATCH", `/v1/contacts/${contact!.id}`, { name: "Renamed SRL" }, org.tokens.api)
      expect(renamed.json.data.fiscal_status).toEqual(shown.fiscal_status)

      const history = await api("GET", `/v1/contacts/${contact!.id}/fiscal-history`, undefined, org.tokens.api)
      expect(history.status).toBe(200)
      expect(history.json.meta).toMatchObject({ page: 1, total: 1 })
      expect(history.json.data).toEqual([{
        id: expect.any(String),
        contact_id: contact!.id,
        checked_on: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        status: shown.fiscal_status,
        baseline: true,
        changes: [],
        event_id: null,
        created_at: shown.fiscal_checked_at
      }])
      expect((await api("GET", `/v1/contacts/${contact!.id}/fiscal-history`, undefined, org.tokens.sandbox)).status).toBe(404)
      expect((await api("GET", `/v1/contacts/${contact!.id}/fiscal-history`, undefined, f.tokens.api)).status).toBe(404)
      const bad = await api("GET", `/v1/contacts/${contact!.id}/fiscal-history?perPage=101`, undefined, org.tokens.api)
      expect([bad.status, bad.json.error.code]).toEqual([400, "validation_failed"])
    })

    it("reads every kind, in both directions, from the registry's own answers", async () => {
      const org = await seedFixture(server)
      const cuis = freshCuis(8)
      const [inactive, reactivated, struckOff, insolvent, registered, deregistered, cashOn, cashOff] = cuis as [
        string, string, string, string, string, string, string, string
      ]
      for (const cui of cuis) fake.set(cui)
      fake.set(reactivated, { statusInactivi: true, dataInactivare: "2026-01-10" })
      fake.set(registered, { scpTVA: false, perioade_TVA: [{ data_inceput_ScpTVA: "2015-03-01", data_sfarsit_ScpTVA: "2020-12-02" }] })
      fake.set(cashOff, { statusTvaIncasare: true, dataInceputTvaInc: "2025-01-01" })
      const made = await customers(org.live, cuis)
      const idOf = (cui: string) => made.find((m) => m.cui === cui)!.id
      const now = Date.now()
      await passAt(now, org.organizationId)

      fake.set(inactive, { statusInactivi: true, dataInactivare: "2026-05-10" })
      fake.set(reactivated, { statusInactivi: false, dataReactivare: "2026-05-11" })
      fake.set(struckOff, { stare_inregistrare: "RADIERE din data 12.05.2026", dataRadiere: "2026-05-12" })
      fake.set(insolvent, { denumire: "CLIENT SRL - ÎN INSOLVENŢĂ" })
      fake.set(registered, {
        scpTVA: true,
        perioade_TVA: [
          { data_inceput_ScpTVA: "2026-05-13", data_sfarsit_ScpTVA: "" },
          { data_inceput_ScpTVA: "2015-03-01", data_sfarsit_ScpTVA: "2020-12-02" }
        ]
      })
      fake.set(deregistered, { scpTVA: false, perioade_TVA: [{ data_inceput_ScpTVA: "2015-03-01", data_sfarsit_ScpTVA: "2026-05-14" }] })
      fake.set(cashOn, { statusTvaIncasare: true, dataInceputTvaInc: "2026-05-01" })
      fake.set(cashOff, { statusTvaIncasare: false, dataSfarsitTvaInc: "2026-04-30" })
      const next = await passAt(now + DAY_MS, org.organizationId)
      const sent = new Map(next.events.map((e) => [e.contact_id, e]))
      const expected: Array<[string, string, string]> = [
        [inactive, "became_inactive", "2026-05-10"],
        [reactivated, "reactivated", "2026-05-11"],
        [struckOff, "struck_off", "2026-05-12"],
        [registered, "vat_registered", "2026-05-13"],
        [deregistered, "vat_deregistered", "2026-05-14"],
        [cashOn, "cash_vat_on", "2026-05-01"],
        [cashOff, "cash_vat_off", "2026-04-30"]
      ]
      for (const [cui, kind, date] of expected) {
        expect(sent.get(idOf(cui)), kind).toMatchObject({ kinds: [kind], event_id: Events.fiscalStatusEventId(idOf(cui), kind as never, date) })
      }
      // The name carries insolvency without a date: the event is dated by the check.
      expect(sent.get(idOf(insolvent))?.kinds).toEqual(["insolvency"])
      expect(next.events.length).toBe(8)

      // And back: each of the pairs the other way round.
      fake.set(inactive, { statusInactivi: false, dataReactivare: "2026-05-20" })
      fake.set(reactivated, { statusInactivi: true, dataInactivare: "2026-05-21" })
      fake.set(registered, { scpTVA: false, perioade_TVA: [{ data_inceput_ScpTVA: "2026-05-13", data_sfarsit_ScpTVA: "2026-05-22" }] })
      fake.set(deregistered, { scpTVA: true, perioade_TVA: [{ data_inceput_ScpTVA: "2026-05-23", data_sfarsit_ScpTVA: "" }] })
      fake.set(cashOn, { statusTvaIncasare: false, dataSfarsitTvaInc: "2026-05-24" })
      fake.set(cashOff, { statusTvaIncasare: true, dataInceputTvaInc: "2026-05-25" })
      const back = await passAt(now + 2 * DAY_MS, org.organizationId)
      expect(new Map(back.events.map((e) => [e.contact_id, e.kinds]))).toEqual(new Map([
        [idOf(inactive), ["reactivated"]],
        [idOf(reactivated), ["became_inactive"]],
        [idOf(registered), ["vat_deregistered"]],
        [idOf(deregistered), ["vat_registered"]],
        [idOf(cashOn), ["cash_vat_off"]],
        [idOf(cashOff), ["cash_vat_on"]]
      ]))
    })

    it("takes notFound (either spelling) as unknown, retries 5xx and timeouts, and gives up without an event", async () => {
      const org = await seedFixture(server)
      const [known, unknown, flaky] = freshCuis(3) as [string, string, string]
      fake.set(known)
      const [knownContact, unknownContact] = await customers(org.live, [known, unknown])
      fake.notFoundKey = "notfound"
      const now = Date.now()
      const first = await passAt(now, org.organizationId).finally(() => (fake.notFoundKey = "notFound"))
      expect([first.checked, first.not_found]).toEqual([1, 1])
      const unknownShown = (await api("GET", `/v1/contacts/${unknownContact!.id}`, undefined, org.tokens.api)).json.data
      expect([unknownShown.fiscal_status, unknownShown.fiscal_checked_at]).toEqual([null, null])

      // A 503, then an answer: the retry carries the check through. A known company that has gone from the
      // registry is unknown, not a change.
      fake.remove(known)
      fake.set(flaky)
      const [flakyContact] = await customers(org.live, [flaky])
      let mark = fake.requests.length
      fake.failNext(503)
      const retried = await passAt(now + DAY_MS, org.organizationId)
      expect([retried.checked, retried.baselines, retried.not_found, retried.events]).toEqual([1, 1, 2, []])
      expect(fake.requests.slice(mark).map((r) => r.status)).toEqual([503, 200])
      expect((await api("GET", `/v1/contacts/${knownContact!.id}`, undefined, org.tokens.api)).json.data.fiscal_status.cui).toBe(known)

      // Two 500s, then two answers slower than the timeout: the registry is unavailable; nothing is recorded and
      // every contact stays due, until it answers again that same day.
      fake.set(flaky, { statusInactivi: true, dataInactivare: "2026-05-10" })
      mark = fake.requests.length
      fake.failNext(500, 2)
      const failed = await passAt(now + 2 * DAY_MS, org.organizationId)
      expect([failed.checked, failed.not_found, failed.unavailable, failed.events]).toEqual([0, 0, 3, []])
      expect(fake.requests.slice(mark).map((r) => r.status)).toEqual([500, 500])
      mark = fake.requests.length
      fake.delayMs = 800
      const late = await passAt(now + 2 * DAY_MS, org.organizationId).finally(() => (fake.delayMs = 0))
      expect([late.checked, late.unavailable, late.events]).toEqual([0, 3, []])
      expect(fake.requests.length - mark).toBe(2)
      const flakyShown = (await api("GET", `/v1/contacts/${flakyContact!.id}`, undefined, org.tokens.api)).json.data
      expect(flakyShown.fiscal_status.inactive.status).toBe(false)
      const recovered = await passAt(now + 2 * DAY_MS, org.organizationId)
      expect([recovered.checked, recovered.not_found, recovered.events.map((e) => e.kinds)]).toEqual([1, 2, [["became_inactive"]]])
    }, 60_000)

    it("sends a batch of 250 customers as 3 requests of at most 100, at least a second apart", async () => {
      // ANAF's own limit: a server without OPSPLATFORM_ANAF_REQUESTS_PER_SECOND.
      const { OPSPLATFORM_ANAF_REQUESTS_PER_SECOND: _, ...anafPace } = anafEnv(fake)
      const paced = await startTestServer(db.choice(), { env: anafPace })
      try {
        const org = await seedFixture(paced)
        const cuis = freshCuis(250)
        for (const cui of cuis) fake.set(cui)
        await paced.run(customersMade(org.live, cuis, "10"))
        const mark = fake.requests.length
        const summary = await paced.run(Effect.flatMap(FiscalMonitor.FiscalMonitor, (m) => m.runAt(Date.now(), { organizationId: org.organizationId })))
        expect(summary.baselines).toBe(250)
        const requests = fake.requests.slice(mark)
        expect(requests.map((r) => r.body.length)).toEqual([100, 100, 50])
        expect(requests.flatMap((r) => r.body.map((e) => String(e.cui))).sort()).toEqual([...cuis].sort())
        expect(requests.every((r) => r.body.every((e) => typeof e.cui === "number" && /^\d{4}-\d{2}-\d{2}$/.test(String(e.data))))).toBe(true)
        for (const gap of gaps(requests.map((r) => r.at))) expect(gap).toBeGreaterThanOrEqual(1000)
      } finally {
        await paced.close()
      }
    }, 120_000)

    it("at a registry allowing more, asks as often as it allows and no more", async () => {
      const org = await seedFixture(server)
      const cuis = freshCuis(250)
      for (const cui of cuis) fake.set(cui)
      await customers(org.live, cuis, "10")
      const mark = fake.requests.length
      const summary = await passAt(Date.now(), org.organizationId)
      expect(summary.baselines).toBe(250)
      const requests = fake.requests.slice(mark)
      expect(requests.map((r) => r.body.length)).toEqual([100, 100, 50])
      // 20 a second: 1.1 / 20 s = 55 ms apart within the process.
      for (const gap of gaps(requests.map((r) => r.at))) expect(gap).toBeGreaterThanOrEqual(50)
    }, 120_000)

    it("two monitors on separate connection pools send each change exactly once", async () => {
      const org = await seedFixture(server)
      const cuis = freshCuis(150)
      for (const cui of cuis) fake.set(cui)
      const made = await customers(org.live, cuis)
      const yesterday = Date.now() - DAY_MS
      await passAt(yesterday, org.organizationId)
      for (const cui of cuis) fake.set(cui, { statusInactivi: true, dataInactivare: "2026-05-10" })

      // PostgreSQL: a second pool, as another host would have. PGlite serves one process, so both share its session.
      const second = db.name === "postgres" ? await openCore(db.choice(), anafEnv(fake)) : undefined
      const runOn = (core: typeof second) => {
        const pass = Effect.flatMap(FiscalMonitor.FiscalMonitor, (m) => m.run({ organizationId: org.organizationId }))
        return core === undefined ? server.run(pass) : core.run(pass)
      }
      try {
        const summaries = await Promise.all([runOn(undefined), runOn(second), runOn(undefined), runOn(second)])
        expect(summaries.map((s) => s.unavailable)).toEqual([0, 0, 0, 0])
        const sent = summaries.flatMap((s) => s.events.map((e) => e.event_id))
        expect(sent.sort()).toEqual(made.map((m) => Events.fiscalStatusEventId(m.id, "became_inactive", "2026-05-10")).sort())
        const stored = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM outbox_events
            WHERE organization_id = ${org.organizationId} AND type = 'contact.fiscal_status_changed'`))
        expect(stored[0]!.n).toBe(150)
        const again = await Promise.all([runOn(undefined), runOn(second)])
        expect(again.flatMap((s) => s.events)).toEqual([])
      } finally {
        await second?.close()
      }
    }, 120_000)
  })

  describe(`the daily check inside serve delivers the change, signed (${db.name})`, () => {
    let fake: FakeAnaf
    let server: TestServer
    let receiver: Receiver
    beforeAll(async () => {
      fake = await startFakeAnaf()
      receiver = await startReceiver({ tls: true })
      server = await startTestServer(db.choice(), {
        background: true,
        env: { ...anafEnv(fake), OPSPLATFORM_FISCAL_CHECK_HOUR: "0", OPSPLATFORM_FISCAL_INTERVAL_SEC: "1" }
      })
    })
    afterAll(async () => {
      await server.close()
      await receiver.close()
      await fake.close()
    })

    it("a customer turned inactive: the next daily check sends one contact.fiscal_status_changed, a rerun that day nothing", async () => {
      const org = await seedFixture(server)
      const api = (method: string, path: string, body?: unknown) =>
        call(server, method, path, { token: org.tokens.api, ...(body === undefined ? {} : { body }) })
      // Twelve hours behind UTC; moving to fourteen ahead later turns the organization's date to a later one, with
      // the real clock (the receiver checks the signature's timestamp against it).
      expect((await api("PATCH", "/v1/organization", { time_zone: "Etc/GMT+12" })).status).toBe(200)
      const sub = await subscribe(server, org.tokens.api, receiver.url, ["contact.fiscal_status_changed"])
      receiver.secrets = [sub.secret]

      const [cui] = freshCuis(1)
      fake.set(cui!, { denumire: "DANTE DISTRIBUTIE SRL" })
      const contact = (await api("POST", "/v1/contacts", { name: "Dante SRL", kind: "customer", vat_number: `RO ${cui}` })).json.data
      const invoice = async (currency: string, price: string, rate?: string) => {
        const draft = (await api("POST", "/v1/invoices", {
          contact_id: contact.id,
          currency,
          lines: [{ description: "Goods", quantity: "1", unit_price: price, vat_rate: 21 }]
        })).json.data
        const issued = await api("POST", `/v1/invoices/${draft.id}/issue`, { series: "FCT", ...(rate ? { exchange_rate_ron: rate } : {}) })
        expect(issued.status, issued.text).toBe(200)
        return issued.json.data
      }
      await invoice("RON", "1000") // 1210.00 RON
      const eur = await invoice("EUR", "100", "4.9763") // 121.00 EUR = 602.13 RON
      await api("POST", `/v1/invoices/${eur.id}/payments`, { amount: "21.00", payment_date: "2026-03-02", method: "CARD" }) // 100.00 EUR left = 497.63 RON

      // The check in serve records the baseline, and sends nothing. (On a shared PostgreSQL the pass also checks
      // every other organization's due customers first, at one request of 100 a second.)
      const baseline = await eventually(
        () => api("GET", `/v1/contacts/${contact.id}`),
        (r) => r.json.data.fiscal_checked_at !== null,
        60_000
      )
      expect(baseline.json.data.fiscal_status.inactive).toEqual({ status: false, effective_date: null })

      // The registry declares the customer inactive. The same day, the passes in serve do not ask again.
      fake.set(cui!, { statusInactivi: true, dataInactivare: "2026-05-10" })
      const askedAbout = () => fake.requests.filter((r) => r.body.some((e) => String(e.cui) === cui)).length
      const asked = askedAbout()
      await new Promise((r) => setTimeout(r, 2_500))
      expect(askedAbout()).toBe(asked)
      expect(receiver.received).toEqual([])

      // The organization's next date: the next daily check finds the change and delivers it.
      expect((await api("PATCH", "/v1/organization", { time_zone: "Pacific/Kiritimati" })).status).toBe(200)
      await receiver.until((r) => r.length >= 1, 60_000)
      expect(receiver.rejected).toEqual([])
      const delivery = receiver.received[0]!
      const body = JSON.parse(delivery.body)
      const eventId = Events.fiscalStatusEventId(contact.id, "became_inactive", "2026-05-10")
      expect(delivery.headers["webhook-id"]).toBe(eventId)
      expect(delivery.headers["x-service-event"]).toBe("contact.fiscal_status_changed")
      expect(body).toEqual({
        id: eventId,
        type: "contact.fiscal_status_changed",
        created: expect.any(Number),
        environment: "live",
        data: {
          changes: [{ kind: "became_inactive", effective_date: "2026-05-10" }],
          open_invoices: { count: 2, balance_ron: "1707.63" },
          organizationId: org.organizationId
        }
      })

      // A rerun the same day, on demand and in serve, sends nothing.
      const rerun = await server.run(Effect.flatMap(FiscalMonitor.FiscalMonitor, (m) => m.run({ organizationId: org.organizationId })))
      expect([rerun.checked, rerun.events]).toEqual([0, []])
      await new Promise((r) => setTimeout(r, 2_500))
      expect(receiver.received.length).toBe(1)
      const history = (await api("GET", `/v1/contacts/${contact.id}/fiscal-history`)).json.data
      expect(history.map((h: any) => [h.baseline, h.event_id])).toEqual([[false, eventId], [true, null]])
    }, 180_000)
  })
}
