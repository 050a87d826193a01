import { Context, Effect, Exit, Layer, References, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Notifier, ObligationMonitor, ObligationRules, Obligations, Tenancy } from "@opsplatform/core"
import { type Fixture, makeFixture } from "@opsplatform/testing"
import { coreLive } from "../src/server/app.ts"
import { serverSettingsFrom } from "../src/config/Configuration.ts"
import { testConfiguration } from "./support/config.ts"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"
import { eventually } from "./support/webhooks.ts"

const { addDays, localDate } = ObligationRules

for (const db of testDatabases()) {
  describe(`/v1/contract-obligations over HTTP (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    let contractId: string
    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
      contractId = (await call(server, "POST", "/v1/contracts", { token: f.tokens.api, body: { name: "Cleaning services" } }))
        .json.data.id
    })
    afterAll(() => server.close())

    const api = (method: string, path: string, body?: unknown, token = f.tokens.api) =>
      call(server, method, path, { token, ...(body !== undefined ? { body } : {}) })
    const create = async (fields: Record<string, unknown> = {}, token = f.tokens.api) => {
      const res = await api("POST", "/v1/contract-obligations", {
        contract_id: contractId,
        title: "Monthly invoice",
        type: "payment",
        due_date: "2027-06-30",
        ...fields
      }, token)
      expect(res.status, res.text).toBe(201)
      return res.json.data
    }
    const notices = (tenant: Fixture["live"], id: string) =>
      server.run(Effect.flatMap(Notifier.Notifier, (n) => n.sentFor(tenant, id)))
    const monitorPass = (organizationId?: string) =>
      server.run(Effect.flatMap(ObligationMonitor.ObligationMonitor, (m) => m.run({ organizationId })))

    it("creates with defaults, reads, patches and lists an obligation in the envelope", async () => {
      const created = await api("POST", "/v1/contract-obligations", {
        contract_id: contractId,
        title: "  Quarterly report  ",
        type: "report",
        due_date: "2027-03-31"
      })
      expect(created.status).toBe(201)
      expect(created.json.error).toBeNull()
      const o = created.json.data
      expect(o).toMatchObject({
        contract_id: contractId,
        contract_name: "Cleaning services",
        title: "Quarterly report",
        type: "report",
        due_date: "2027-03-31",
        recurrence: "none",
        remind_days_before: 7,
        status: "pending",
        obligor: "us",
        assignee_user_id: null,
        assignee_name: null,
        has_evidence: false,
        completed_at: null,
        overdue_notified_at: null,
        escalated_at: null,
        previous_obligation_id: null,
        next_obligation_id: null
      })
      expect(["upcoming", "due_soon", "overdue"]).toContain(o.bucket)
      expect(Object.keys(o)).not.toContain("reminder_sent_at")
      const got = await api("GET", `/v1/contract-obligations/${o.id}`)
      expect(got.json).toEqual({ data: o, error: null })
      const patched = await api("PATCH", `/v1/contract-obligations/${o.id}`, {
        title: "Quarterly usage report",
        obligor: "counterparty",
        clause_label: "§4.2",
        clause_excerpt: "Reports are due at each quarter's end.",
        description: "Email to finance"
      })
      expect(patched.status).toBe(200)
      expect(patched.json.data).toMatchObject({
        title: "Quarterly usage report",
        obligor: "counterparty",
        clause_label: "§4.2",
        due_date: "2027-03-31"
      })
      // The contract name is read, never copied: a rename shows at once.
      await api("PATCH", `/v1/contracts/${contractId}`, { name: "Cleaning services 2027" })
      expect((await api("GET", `/v1/contract-obligations/${o.id}`)).json.data.contract_name).toBe("Cleaning services 2027")
      await api("PATCH", `/v1/contracts/${contractId}`, { name: "Cleaning services" })
      const contracts = await api("GET", "/v1/contracts")
      expect(contracts.json.data.map((c: any) => c.id)).toContain(contractId)
      const listed = await api("GET", `/v1/contract-obligations?contract_id=${contractId}&type=report&perPage=100`)
      expect(listed.json.data.map((x: any) => x.id)).toContain(o.id)
      expect(listed.json.meta.perPage).toBe(100)
    })

    it("enforces every constraint at its limit and refuses one past it", async () => {
      const o = await create()
      const path = `/v1/contract-obligations/${o.id}`
      const accepts = async (body: Record<string, unknown>) => {
        const res = await api("PATCH", path, body)
        expect(res.status, res.text).toBe(200)
        for (const [k, v] of Object.entries(body)) expect(res.json.data[k]).toEqual(v)
      }
      const refuses = async (body: Record<string, unknown>, field: string, method = "PATCH", url = path) => {
        const res = await api(method, url, body)
        expect(res.status, res.text).toBe(400)
        expect(res.json.error.code).toBe("validation_failed")
        expect(res.json.error.details.map((d: any) => d.field)).toEqual([field])
      }
      await accepts({ title: "t".repeat(255) })
      await refuses({ title: "t".repeat(256) }, "title")
      await refuses({ title: "   " }, "title")
      await accepts({ clause_label: "c".repeat(80) })
      await refuses({ clause_label: "c".repeat(81) }, "clause_label")
      await accepts({ evidence_note: "e".repeat(2000) })
      await refuses({ evidence_note: "e".repeat(2001) }, "evidence_note")
      await accepts({ remind_days_before: 0 })
      await accepts({ remind_days_before: 365 })
      await refuses({ remind_days_before: -1 }, "remind_days_before")
      await refuses({ remind_days_before: 366 }, "remind_days_before")
      await refuses({ remind_days_before: 1.5 }, "remind_days_before")
      await refuses({ type: "bribe" }, "type")
      await refuses({ recurrence: "weekly" }, "recurrence")
      await refuses({ obligor: "them" }, "obligor")
      await refuses({ due_date: "2027-02-29" }, "due_date")
      await refuses({ assignee_user_id: "someone" }, "assignee_user_id")
      await refuses({ evidence_document_id: "doc-1" }, "evidence_document_id")
      await refuses({ title: null }, "title")
      await refuses({ owner: "me" }, "owner")
      // The contract is fixed after creation.
      const fixed = await api("PATCH", path, { contract_id: contractId })
      expect(fixed.status).toBe(400)
      expect(fixed.json.error.details).toEqual([
        { field: "contract_id", issue: "is fixed after creation; create a new obligation for another contract" }
      ])
      // The same limits on creation and completion.
      const base = { contract_id: contractId, title: "x", type: "payment", due_date: "2027-06-30" }
      await refuses({ ...base, title: "t".repeat(256) }, "title", "POST", "/v1/contract-obligations")
      await refuses({ ...base, clause_label: "c".repeat(81) }, "clause_label", "POST", "/v1/contract-obligations")
      await refuses({ ...base, evidence_note: "e".repeat(2001) }, "evidence_note", "POST", "/v1/contract-obligations")
      await refuses({ ...base, remind_days_before: 366 }, "remind_days_before", "POST", "/v1/contract-obligations")
      await refuses({ ...base, remind_days_before: -1 }, "remind_days_before", "POST", "/v1/contract-obligations")
      expect((await create({ title: "t".repeat(255), clause_label: "c".repeat(80), evidence_note: "e".repeat(2000), remind_days_before: 365 })).title)
        .toHaveLength(255)
      await refuses({ evidence_note: "e".repeat(2001) }, "evidence_note", "POST", `${path}/complete`)
      const missing = await api("POST", "/v1/contract-obligations", {})
      expect(missing.json.error.details.map((d: any) => d.field).sort()).toEqual(["contract_id", "due_date", "title", "type"])
      // Nothing changed by the refused requests.
      const after = (await api("GET", path)).json.data
      expect([after.status, after.remind_days_before, after.title]).toEqual(["pending", 365, "t".repeat(255)])
    })

    it("derives has_evidence and assignee_name; refuses a non-member assignee and a foreign contract with 404", async () => {
      const member = await server.run(Effect.flatMap(Tenancy.Tenancy, (t) => t.getMember(f.organizationId, f.userId)))
      const o = await create({ assignee_user_id: f.userId })
      expect([o.assignee_user_id, o.assignee_name]).toEqual([f.userId, member.name])
      const path = `/v1/contract-obligations/${o.id}`
      expect((await api("PATCH", path, { evidence_note: "Receipt 42" })).json.data.has_evidence).toBe(true)
      expect((await api("PATCH", path, { evidence_note: null })).json.data.has_evidence).toBe(false)
      expect((await api("PATCH", path, { evidence_document_id: "00000000-0000-4000-8000-0000000000d0" })).json.data.has_evidence)
        .toBe(true)
      const cleared = (await api("PATCH", path, { assignee_user_id: null })).json.data
      expect([cleared.assignee_user_id, cleared.assignee_name]).toEqual([null, null])

      const other = await seedFixture(server)
      const stranger = await api("PATCH", path, { assignee_user_id: other.userId })
      expect(stranger.status).toBe(404)
      expect(stranger.json.error).toMatchObject({ code: "not_found", message: `No member with id '${other.userId}'` })
      const foreignContract = await api("POST", "/v1/contract-obligations", {
        contract_id: contractId,
        title: "x",
        type: "custom",
        due_date: "2027-01-01"
      }, other.tokens.api)
      expect(foreignContract.status).toBe(404)
      expect(foreignContract.json.error.message).toBe(`No contract with id '${contractId}'`)
      expect((await api("GET", path, undefined, other.tokens.api)).status).toBe(404)
      expect((await api("GET", path, undefined, f.tokens.sandbox)).status).toBe(404)
      const malformed = await api("GET", "/v1/contract-obligations/not-a-uuid")
      expect([malformed.status, malformed.json.error.code]).toEqual([400, "validation_failed"])
      expect((await api("GET", "/v1/contracts/not-a-uuid")).status).toBe(400)
    })

    it("moves between statuses only as the transition table allows, naming both states otherwise", async () => {
      const inStatus = async (status: "pending" | "completed" | "cancelled") => {
        const o = await create()
        if (status === "completed") expect((await api("POST", `/v1/contract-obligations/${o.id}/complete`)).status).toBe(200)
        if (status === "cancelled") expect((await api("POST", `/v1/contract-obligations/${o.id}/cancel`)).status).toBe(200)
        return o.id as string
      }
      const target = { complete: "completed", reopen: "pending", cancel: "cancelled" } as const
      const allowed = new Set(["pending:complete", "pending:cancel", "completed:reopen"])
      for (const from of ["pending", "completed", "cancelled"] as const) {
        for (const action of ["complete", "reopen", "cancel"] as const) {
          const id = await inStatus(from)
          const res = await api("POST", `/v1/contract-obligations/${id}/${action}`)
          if (allowed.has(`${from}:${action}`)) {
            expect(res.status, `${from} ${action}`).toBe(200)
            expect(res.json.data.status).toBe(target[action])
            expect(res.json.data.completed_at === null).toBe(target[action] !== "completed")
            expect(res.json.data.cancelled_at === null).toBe(target[action] !== "cancelled")
          } else {
            expect(res.status, `${from} ${action}`).toBe(409)
            expect(res.json.error).toMatchObject({
              code: "invalid_transition",
              message: `A contract obligation cannot go from ${from} to ${target[action]}`
            })
            expect((await api("GET", `/v1/contract-obligations/${id}`)).json.data.status).toBe(from)
          }
        }
      }
      const cancelled = await inStatus("cancelled")
      const frozen = await api("PATCH", `/v1/contract-obligations/${cancelled}`, { title: "Changed" })
      expect([frozen.status, frozen.json.error.code]).toEqual([409, "conflict"])
      expect((await api("POST", "/v1/contract-obligations/00000000-0000-4000-8000-000000000404/complete")).status).toBe(404)
    })

    it("completing a recurring obligation creates the next one, anchored at month end across Feb 29, with evidence kept on the done one", async () => {
      const jan = await create({ due_date: "2028-01-31", recurrence: "monthly", assignee_user_id: f.userId, clause_label: "§9" })
      const done = await api("POST", `/v1/contract-obligations/${jan.id}/complete`, {
        evidence_note: "Paid by wire",
        evidence_document_id: "00000000-0000-4000-8000-0000000000e1"
      })
      expect(done.status).toBe(200)
      expect(done.json.data).toMatchObject({ status: "completed", bucket: "done", has_evidence: true, evidence_note: "Paid by wire" })
      const feb = (await api("GET", `/v1/contract-obligations/${done.json.data.next_obligation_id}`)).json.data
      expect(feb).toMatchObject({
        due_date: "2028-02-29",
        status: "pending",
        recurrence: "monthly",
        previous_obligation_id: jan.id,
        assignee_user_id: f.userId,
        clause_label: "§9",
        has_evidence: false,
        evidence_note: null
      })
      const mar = (await api("POST", `/v1/contract-obligations/${feb.id}/complete`)).json.data.next_obligation_id
      expect((await api("GET", `/v1/contract-obligations/${mar}`)).json.data.due_date).toBe("2028-03-31")

      const yearly = await create({ due_date: "2028-02-29", recurrence: "yearly" })
      const next = (await api("POST", `/v1/contract-obligations/${yearly.id}/complete`)).json.data.next_obligation_id
      expect((await api("GET", `/v1/contract-obligations/${next}`)).json.data.due_date).toBe("2029-02-28")

      // Reopening is refused while the next one stands; after it is cancelled, only one open successor ever exists.
      const refused = await api("POST", `/v1/contract-obligations/${feb.id}/reopen`)
      expect([refused.status, refused.json.error.code]).toEqual([409, "conflict"])
      expect(refused.json.error.message).toContain(mar)
      expect((await api("POST", `/v1/contract-obligations/${mar}/cancel`)).status).toBe(200)
      const reopened = await api("POST", `/v1/contract-obligations/${feb.id}/reopen`)
      expect(reopened.json.data).toMatchObject({ status: "pending", completed_at: null, next_obligation_id: null })
      const again = (await api("POST", `/v1/contract-obligations/${feb.id}/complete`)).json.data.next_obligation_id
      expect(again).not.toBe(mar)
      const open = await api("GET", `/v1/contract-obligations?contract_id=${contractId}&status=pending&due_from=2028-03-31&due_to=2028-03-31`)
      expect(open.json.data.map((o: any) => o.id)).toEqual([again])
    })

    it("lists by bucket, read today in the organization's time zone, with every filter", async () => {
      const org = await seedFixture(server)
      const zone = "Pacific/Kiritimati" // UTC+14: its today is often UTC's tomorrow
      expect((await api("PATCH", "/v1/organization", { time_zone: zone }, org.tokens.api)).status).toBe(200)
      const c = (await api("POST", "/v1/contracts", { name: "Lease" }, org.tokens.api)).json.data.id
      const today = localDate(Date.now(), zone)
      const make = async (fields: Record<string, unknown>) =>
        (await api("POST", "/v1/contract-obligations", { contract_id: c, title: "x", type: "payment", due_date: today, ...fields }, org.tokens.api))
          .json.data
      const overdue = await make({ due_date: addDays(today, -1), type: "delivery" })
      const dueToday = await make({ remind_days_before: 0, obligor: "counterparty" })
      const windowOpens = await make({ due_date: addDays(today, 7), remind_days_before: 7, assignee_user_id: org.userId })
      const upcoming = await make({ due_date: addDays(today, 8), remind_days_before: 7, type: "renewal_notice" })
      const done = await make({ due_date: addDays(today, -3) })
      await api("POST", `/v1/contract-obligations/${done.id}/complete`, undefined, org.tokens.api)
      const ids = async (query: string) => {
        const res = await api("GET", `/v1/contract-obligations?${query}`, undefined, org.tokens.api)
        expect(res.status, res.text).toBe(200)
        return res.json.data.map((o: any) => o.id)
      }
      expect(await ids("bucket=overdue")).toEqual([overdue.id])
      expect(await ids("bucket=due_soon")).toEqual([windowOpens.id, dueToday.id])
      expect(await ids("bucket=upcoming")).toEqual([upcoming.id])
      expect(await ids("bucket=done")).toEqual([done.id])
      expect([overdue.bucket, dueToday.bucket, windowOpens.bucket, upcoming.bucket]).toEqual(["overdue", "due_soon", "due_soon", "upcoming"])
      expect(await ids("status=completed")).toEqual([done.id])
      expect(await ids("type=renewal_notice")).toEqual([upcoming.id])
      expect(await ids("obligor=counterparty")).toEqual([dueToday.id])
      expect(await ids(`assignee_user_id=${org.userId}`)).toEqual([windowOpens.id])
      expect(await ids(`due_from=${today}&due_to=${addDays(today, 7)}`)).toEqual([windowOpens.id, dueToday.id])
      expect(await ids(`bucket=due_soon&obligor=us`)).toEqual([windowOpens.id])
      const firstPage = await api("GET", "/v1/contract-obligations?perPage=2", undefined, org.tokens.api)
      expect(firstPage.json.meta).toMatchObject({ page: 1, perPage: 2, total: 5, totalPages: 3 })
      const secondPage = await api("GET", `/v1/contract-obligations?perPage=2&cursor=${firstPage.json.meta.nextCursor}`, undefined, org.tokens.api)
      expect(secondPage.json.data.map((o: any) => o.id)).toEqual([windowOpens.id, dueToday.id])
      const badRange = await api("GET", `/v1/contract-obligations?due_from=2027-02-01&due_to=2027-01-01`, undefined, org.tokens.api)
      expect([badRange.status, badRange.json.error.details]).toEqual([400, [{ field: "due_to", issue: "must not be before due_from" }]])
      const badBucket = await api("GET", "/v1/contract-obligations?bucket=late&status=open", undefined, org.tokens.api)
      expect(badBucket.json.error.details.map((d: any) => d.field).sort()).toEqual(["bucket", "status"])
      // Nothing of another environment.
      expect(await ids("perPage=100").then((all) => all.length)).toBe(5)
      const sandbox = await api("GET", "/v1/contract-obligations", undefined, org.tokens.sandbox)
      expect(sandbox.json.meta.total).toBe(0)
    })

    it("a PATCH that changes due_date resets the overdue notice and the escalation, and the next run notifies the new date", async () => {
      const org = await seedFixture(server)
      const c = (await api("POST", "/v1/contracts", { name: "Audit" }, org.tokens.api)).json.data.id
      const o = (await api("POST", "/v1/contract-obligations", { contract_id: c, title: "Annual audit", type: "report", due_date: "2020-01-01" }, org.tokens.api)).json.data
      const path = `/v1/contract-obligations/${o.id}`
      await monitorPass(org.organizationId)
      const notified = (await api("GET", path, undefined, org.tokens.api)).json.data
      expect(notified.overdue_notified_at).not.toBeNull()
      expect(notified.escalated_at).not.toBeNull()
      // Other fields, and the same date again, keep both.
      const same = (await api("PATCH", path, { title: "Annual audit 2019", due_date: "2020-01-01" }, org.tokens.api)).json.data
      expect([same.overdue_notified_at, same.escalated_at]).toEqual([notified.overdue_notified_at, notified.escalated_at])
      const moved = (await api("PATCH", path, { due_date: "2020-02-01" }, org.tokens.api)).json.data
      expect([moved.overdue_notified_at, moved.escalated_at, moved.bucket]).toEqual([null, null, "overdue"])
      await monitorPass(org.organizationId)
      const again = (await api("GET", path, undefined, org.tokens.api)).json.data
      expect(again.overdue_notified_at).not.toBeNull()
      expect(again.escalated_at).not.toBeNull()
      expect((await notices(org.live, o.id)).map((n) => `${n.kind}:${n.dueDate}`)).toEqual([
        "overdue:2020-01-01",
        "escalation:2020-01-01",
        "overdue:2020-02-01",
        "escalation:2020-02-01"
      ])
      // A future date: reset, and nothing to send.
      const future = (await api("PATCH", path, { due_date: "2099-01-01" }, org.tokens.api)).json.data
      expect([future.overdue_notified_at, future.escalated_at, future.bucket]).toEqual([null, null, "upcoming"])
      expect((await monitorPass(org.organizationId)).notices).toEqual([])
    })

    it("reads and changes the organization's settings, validated, from a live credential only", async () => {
      const org = await seedFixture(server)
      const got = await api("GET", "/v1/organization", undefined, org.tokens.api)
      expect(got.json.data).toMatchObject({ id: org.organizationId, time_zone: "UTC", escalation_delay_days: 7 })
      expect((await api("GET", "/v1/organization", undefined, org.tokens.sandbox)).json.data.id).toBe(org.organizationId)
      const both = await api("PATCH", "/v1/organization", { time_zone: "Mars/Olympus_Mons", escalation_delay_days: 366 }, org.tokens.api)
      expect(both.status).toBe(400)
      expect(both.json.error.details.map((d: any) => d.field).sort()).toEqual(["escalation_delay_days", "time_zone"])
      expect((await api("PATCH", "/v1/organization", { escalation_delay_days: -1 }, org.tokens.api)).status).toBe(400)
      for (const days of [0, 365]) {
        expect((await api("PATCH", "/v1/organization", { escalation_delay_days: days }, org.tokens.api)).json.data.escalation_delay_days)
          .toBe(days)
      }
      const changed = await api("PATCH", "/v1/organization", { time_zone: "America/Los_Angeles" }, org.tokens.api)
      expect(changed.json.data).toMatchObject({ time_zone: "America/Los_Angeles", escalation_delay_days: 365 })
      const fromSandbox = await api("PATCH", "/v1/organization", { time_zone: "Europe/Bucharest" }, org.tokens.sandbox)
      expect([fromSandbox.status, fromSandbox.json.error.code]).toEqual([400, "live_credential_required"])
      expect((await api("GET", "/v1/organization", undefined, org.tokens.api)).json.data.time_zone).toBe("America/Los_Angeles")
      const narrow = await api("GET", "/v1/organization", undefined, org.tokens.narrow)
      expect(narrow.headers.get("www-authenticate")).toContain(`scope="organization:read"`)
    })

    it("serves concurrent requests that write in transactions", async () => {
      const ids = await Promise.all(Array.from({ length: 6 }, () => create()).map((p) => p.then((o) => o.id as string)))
      const results = await Promise.all(ids.flatMap((id, i) => [
        api("PATCH", `/v1/contract-obligations/${id}`, { title: `Concurrent ${i}` }),
        api("POST", `/v1/contract-obligations/${id}/complete`),
        api("GET", `/v1/contract-obligations/${id}`),
        api("GET", "/v1/contract-obligations?bucket=done")
      ]))
      expect(results.map((r) => r.status)).toEqual(results.map(() => 200))
      for (const [i, id] of ids.entries()) {
        expect((await api("GET", `/v1/contract-obligations/${id}`)).json.data).toMatchObject({ status: "completed", title: `Concurrent ${i}` })
      }
    })

    it("two monitors on separate connection pools send each notice exactly once", async () => {
      const org = await seedFixture(server)
      await api("PATCH", "/v1/organization", { escalation_delay_days: 0 }, org.tokens.api)
      const c = (await api("POST", "/v1/contracts", { name: "Bulk" }, org.tokens.api)).json.data.id
      const today = localDate(Date.now(), "UTC")
      // More than one claim batch (200) of each kind.
      const made = await server.run(Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const ids: Array<{ id: string; kinds: ReadonlyArray<string> }> = []
        for (let i = 0; i < 260; i++) {
          const overdue = i % 5 !== 0
          const o = yield* obligations.create(org.live, {
            contract_id: c,
            title: `Bulk ${i}`,
            type: "payment",
            due_date: overdue ? addDays(today, -1 - (i % 30)) : addDays(today, 2)
          })
          ids.push({ id: o.id, kinds: overdue ? ["overdue", "escalation"] : ["reminder"] })
        }
        return ids
      }).pipe(Effect.orDie))

      // PostgreSQL: a second process's pool. PGlite serves one process, so both monitors share its one session.
      const scope = Effect.runSync(Scope.make())
      const second = db.name === "postgres"
        ? await Effect.runPromise(Layer.buildWithScope(
          coreLive(db.choice()).pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")), Layer.provide(testConfiguration())),
          scope
        ))
        : undefined
      const runOn = (context: Context.Context<any> | undefined) => {
        const pass = Effect.flatMap(ObligationMonitor.ObligationMonitor, (m) => m.run())
        return context === undefined ? server.run(pass) : Effect.runPromise(Effect.provideContext(pass, context))
      }
      try {
        const summaries = await Promise.all([runOn(undefined), runOn(second), runOn(undefined), runOn(second)])
        const mine = summaries.flatMap((s) => s.notices).filter((n) => n.organization_id === org.organizationId)
        expect(mine.length).toBe(made.reduce((n, o) => n + o.kinds.length, 0))
        for (const o of made) {
          // Each pass stamps its notices with its own start, so two passes' notices need not sort causally.
          const sent = (await notices(org.live, o.id)).map((n) => n.kind).sort()
          expect(sent, o.id).toEqual([...o.kinds].sort())
        }
        const afterwards = await Promise.all([runOn(undefined), runOn(second)])
        expect(afterwards.flatMap((s) => s.notices).filter((n) => n.organization_id === org.organizationId)).toEqual([])
      } finally {
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    }, 180_000)

    it("runs inside the server on its interval", async () => {
      const interval = (value?: string) =>
        serverSettingsFrom(value === undefined ? {} : { OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC: value }).jobs.obligationsIntervalSec
      expect(interval()).toBe(60)
      expect(interval("5")).toBe(5)
      for (const bad of ["0", "-3", "1.5", "soon", "86401"]) {
        expect(() => interval(bad)).toThrow(/OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC must be a whole number of seconds from 1 to 86400/)
      }
      const withInterval = (value: string) =>
        startTestServer(db.choice(), { background: true, env: { OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC: value } })
      await expect(withInterval("soon")).rejects.toThrow(/OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC/)
      const serving = await withInterval("1")
      try {
        const org = await serving.run(makeFixture())
        const c = (await call(serving, "POST", "/v1/contracts", { token: org.tokens.api, body: { name: "Background" } })).json.data.id
        const o = (await call(serving, "POST", "/v1/contract-obligations", {
          token: org.tokens.api,
          body: { contract_id: c, title: "Late", type: "payment", due_date: "2021-06-30" }
        })).json.data
        const seen = await eventually(
          async () => (await call(serving, "GET", `/v1/contract-obligations/${o.id}`, { token: org.tokens.api })).json.data,
          (data) => data.escalated_at !== null,
          30_000
        )
        expect(seen.overdue_notified_at).not.toBeNull()
        expect(seen.escalated_at).not.toBeNull()
      } finally {
        await serving.close()
      }
    }, 60_000)
  })
}
