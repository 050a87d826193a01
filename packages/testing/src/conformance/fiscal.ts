import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { Contacts } from "@opsplatform/core/contacts/Contacts"
import type { FiscalStatus } from "@opsplatform/core/contacts/model"
import { type EventData, fiscalStatusEventId, type OutboxEvent } from "@opsplatform/core/events/catalog"
import { Outbox } from "@opsplatform/core/events/Outbox"
import { Fiscal } from "@opsplatform/core/fiscal/Fiscal"
import { FiscalRegistry, type FiscalRegistryShape, RegistryUnavailable } from "@opsplatform/core/fiscal/FiscalRegistry"
import { FiscalRepo } from "@opsplatform/core/fiscal/FiscalRepo"
import { FiscalMonitor, type FiscalScope } from "@opsplatform/core/fiscal/Monitor"
import { Invoices } from "@opsplatform/core/invoices/Invoices"
import { Ids } from "@opsplatform/core/shared/Ids"
import { cuiControlDigit } from "@opsplatform/core/shared/identifiers"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"
import { freshOrganization } from "./support.ts"

/*
 * Checks run in the 2090s and every pass is scoped to its own organization,
 * so suites sharing one database never claim each other's contacts.
 */
const day = (d: number, hourUtc = 12) => Date.UTC(2091, 2, d, hourUtc)

let nextCui = 30_000_000
/** A fresh valid CUI (the control digit computed), so tests never share one in the stub registry. */
const freshCui = () => {
  const body = String(nextCui++ + Math.floor(Math.random() * 1000) * 10_000)
  return body + String(cuiControlDigit(body))
}

const off = { status: false, effective_date: null }
const activeStatus = (cui: string): FiscalStatus => ({
  cui,
  inactive: off,
  struck_off: off,
  insolvency: off,
  vat_registered: { status: true, effective_date: "2015-03-01" },
  cash_vat: off
})

/** A registry in memory: the statuses the test sets, `notFound` for the rest, and an outage on demand. */
const stubRegistry = () => {
  const statuses = new Map<string, FiscalStatus>()
  const asked: Array<ReadonlyArray<string>> = []
  const state = { down: false }
  const shape: FiscalRegistryShape = {
    lookup: (cuis) =>
      Effect.suspend(() => {
        asked.push([...cuis])
        if (state.down) return Effect.fail(new RegistryUnavailable({ reason: "HTTP 503 (4 attempts)" }))
        const found = new Map<string, FiscalStatus>()
        const notFound = new Set<string>()
        for (const cui of cuis) {
          const status = statuses.get(cui)
          if (status === undefined) notFound.add(cui)
          else found.set(cui, status)
        }
        return Effect.succeed({ found, notFound })
      })
  }
  return { shape, statuses, asked, state }
}

/**
 * The fiscal check over one storage implementation: the FiscalRepo contract
 * (candidates, the due rule, claims and their lease) and the monitor on top
 * of it, with a registry in memory. The HTTP adapter and the real wire format
 * are tested against a fake ANAF server in http-node.
 */
export const fiscalConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>,
  countEvents: (organizationId: string, eventId: string) => Effect.Effect<number, unknown, CoreLayers.StoragePorts | Ids>
) => {
  const registry = stubRegistry()
  const published: Array<{ readonly tenant: Tenant; readonly event: OutboxEvent }> = []
  const recordingOutbox = Layer.effect(
    Outbox,
    Effect.map(Outbox, (outbox) =>
      Outbox.of({
        publish: (tenant, event) =>
          Effect.tap(outbox.publish(tenant, event), (stored) =>
            Effect.sync(() => {
              if (Option.isSome(stored)) published.push({ tenant, event })
            }))
      }))
  )
  const services = Layer.mergeAll(FiscalMonitor.layer, Fiscal.layer, Contacts.layer, Invoices.layer).pipe(
    Layer.provide(Layer.succeed(FiscalRegistry, registry.shape)),
    Layer.provide(recordingOutbox),
    Layer.provideMerge(storage)
  )

  const eventsOf = (organizationId: string) =>
    published.filter((p) => p.tenant.organizationId === organizationId && p.event.type === "contact.fiscal_status_changed").map((p) => ({
      id: p.event.eventId,
      data: p.event.data as EventData<"contact.fiscal_status_changed">
    }))

  /** A contact with an issued invoice of `amount` (unless `invoice` is false), its CUI known to the registry. */
  const customer = (
    tenant: Tenant,
    options: {
      readonly kind?: "customer" | "supplier" | "both"
      readonly country?: string
      readonly vat?: string | null
      readonly invoice?: "open" | "paid" | "draft" | "none"
      readonly currency?: string
      readonly amount?: string
      readonly rate?: string
    } = {}
  ) =>
    Effect.gen(function*() {
      const contacts = yield* Contacts
      const invoices = yield* Invoices
      const cui = options.vat === undefined ? freshCui() : options.vat
      const contact = yield* contacts.create(tenant, {
        name: "Client SRL",
        kind: options.kind ?? "customer",
        country: options.country ?? "RO",
        vat_number: cui
      })
      if (cui !== null) registry.statuses.set(contact.vat_number!, activeStatus(contact.vat_number!))
      const invoice = options.invoice ?? "open"
      if (invoice !== "none") {
        const draft = yield* invoices.create(tenant, {
          contact_id: contact.id,
          currency: options.currency ?? "RON",
          lines: [{ description: "Services", quantity: "1", unit_price: options.amount ?? "1250", vat_rate: 0 }]
        })
        if (invoice !== "draft") {
          yield* invoices.issue(tenant, draft.id, {
            series: "FCT",
            issue_date: "2091-03-01",
            ...(options.rate === undefined ? {} : { exchange_rate_ron: options.rate })
          })
          if (invoice === "paid") yield* invoices.markPaid(tenant, draft.id, {})
        }
      }
      return contact
    }).pipe(Effect.orDie)

  const pass = (epochMs: number, organizationId: string, scope: FiscalScope = {}) =>
    Effect.flatMap(FiscalMonitor, (m) => m.runAt(epochMs, { ...scope, organizationId }))

  return describe(`Fiscal status conformance: ${name}`, () => {
    layer(services, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("the first check records a baseline and sends nothing; a rerun the same day checks nothing", () =>
        Effect.gen(function*() {
          const org = yield* freshOrganization
          const contact = yield* customer(org.live)
          const first = yield* pass(day(14), org.id)
          assert.deepStrictEqual([first.checked, first.baselines, first.events.length], [1, 1, 0])
          const shown = yield* (yield* Contacts).get(org.live, contact.id)
          assert.deepStrictEqual(shown.fiscal_status, activeStatus(contact.vat_number!))
          assert.strictEqual(shown.fiscal_checked_at, new Date(day(14)).toISOString())
          const history = yield* (yield* Fiscal).history(org.live, contact.id, yield* pageRequest({}))
          assert.deepStrictEqual(
            history.items.map((h) => [h.baseline, h.checked_on, h.changes, h.event_id]),
            [[true, "2091-03-14", [], null]]
          )
          const asked = registry.asked.length
          const again = yield* pass(day(14, 23), org.id)
          assert.deepStrictEqual([again.checked, again.not_found, registry.asked.length], [0, 0, asked])
          assert.deepStrictEqual(eventsOf(org.id), [])
        }))

      it.effect("a later check publishes one event with every change, ordered, and the open balance in RON", () =>
        Effect.gen(function*() {
          const org = yield* freshOrganization
          const contact = yield* customer(org.live, { amount: "1250" })
          const cui = contact.vat_number!
          const invoices = yield* Invoices
          // A EUR invoice at its own rate, one paid and one draft (neither is open).
          const eur = yield* invoices.create(org.live, {
            contact_id: contact.id,
            currency: "EUR",
            lines: [{ description: "Licence", quantity: "1", unit_price: "100", vat_rate: 0 }]
          })
          yield* invoices.issue(org.live, eur.id, { series: "EUR", exchange_rate_ron: "4.9763" })
          const paid = yield* invoices.create(org.live, {
            contact_id: contact.id,
            currency: "RON",
            lines: [{ description: "Paid", quantity: "1", unit_price: "99", vat_rate: 0 }]
          })
          yield* invoices.issue(org.live, paid.id, { series: "FCT" })
          yield* invoices.markPaid(org.live, paid.id, {})
          yield* invoices.create(org.live, { contact_id: contact.id, currency: "RON" })
          yield* pass(day(14), org.id)

          registry.statuses.set(cui, {
            ...activeStatus(cui),
            inactive: { status: true, effective_date: "2091-03-10" },
            cash_vat: { status: true, effective_date: "2091-03-01" }
          })
          const second = yield* pass(day(15), org.id)
          const eventId = fiscalStatusEventId(contact.id, "cash_vat_on", "2091-03-01")
          assert.deepStrictEqual(second.events.map((e) => [e.event_id, e.kinds]), [[eventId, ["cash_vat_on", "became_inactive"]]])
          assert.strictEqual(yield* countEvents(org.id, eventId), 1)
          assert.deepStrictEqual(eventsOf(org.id), [{
            id: eventId,
            data: {
              changes: [
                { kind: "cash_vat_on", effective_date: "2091-03-01" },
                { kind: "became_inactive", effective_date: "2091-03-10" }
              ],
              open_invoices: { count: 2, balance_ron: "1747.63" }
            }
          }])
          const history = yield* (yield* Fiscal).history(org.live, contact.id, yield* pageRequest({}))
          assert.deepStrictEqual(history.items.map((h) => [h.baseline, h.checked_on, h.event_id]), [
            [false, "2091-03-15", eventId],
            [true, "2091-03-14", null]
          ])
          assert.deepStrictEqual(history.items[0]!.status.inactive, { status: true, effective_date: "2091-03-10" })

          // The next day nothing changed: no event, no new history entry, and the check time moves on.
          const third = yield* pass(day(16), org.id)
          assert.deepStrictEqual([third.checked, third.events.length], [1, 0])
          assert.strictEqual((yield* (yield* Fiscal).history(org.live, contact.id, yield* pageRequest({}))).meta.total, 2)
          const shown = yield* (yield* Contacts).get(org.live, contact.id)
          assert.strictEqual(shown.fiscal_checked_at, new Date(day(16)).toISOString())
          assert.strictEqual(shown.fiscal_status?.inactive.status, true)
          // Reactivation is the other direction of the same fact.
          registry.statuses.set(cui, { ...activeStatus(cui), inactive: { status: false, effective_date: "2091-03-16" } })
          const fourth = yield* pass(day(17), org.id)
          assert.deepStrictEqual(fourth.events.map((e) => e.kinds), [["reactivated", "cash_vat_off"]])
        }))

      it.effect("only customers registered in Romania with a CUI and open issued invoices are checked", () =>
        Effect.gen(function*() {
          const org = yield* freshOrganization
          const due = [
            yield* customer(org.live),
            yield* customer(org.live, { kind: "both" }),
            yield* customer(org.sandbox)
          ]
          yield* customer(org.live, { kind: "supplier" })
          yield* customer(org.live, { invoice: "draft" })
          yield* customer(org.live, { invoice: "paid" })
          yield* customer(org.live, { invoice: "none" })
          yield* customer(org.live, { country: "DE", vat: "DE129273398" })
          yield* customer(org.live, { vat: null })
          const before = registry.asked.length
          const summary = yield* pass(day(14), org.id)
          assert.strictEqual(summary.checked, 3)
          assert.deepStrictEqual(
            registry.asked.slice(before).flat().sort(),
            due.map((c) => c.vat_number!).sort()
          )
        }))

      it.effect("a CUI the registry does not know is unknown, and an unavailable registry leaves its contacts due", () =>
        Effect.gen(function*() {
          const org = yield* freshOrganization
          const contact = yield* customer(org.live)
          const cui = contact.vat_number!
          yield* pass(day(14), org.id)
          registry.statuses.delete(cui)
          const unknown = yield* pass(day(15), org.id)
          assert.deepStrictEqual([unknown.checked, unknown.not_found, unknown.events.length], [0, 1, 0])
          const shown = yield* (yield* Contacts).get(org.live, contact.id)
          assert.deepStrictEqual(shown.fiscal_status, activeStatus(cui))
          assert.strictEqual(shown.fiscal_checked_at, new Date(day(14)).toISOString())
          // Asked about once a day, like any other.
          assert.strictEqual((yield* pass(day(15, 20), org.id)).not_found, 0)

          registry.statuses.set(cui, { ...activeStatus(cui), struck_off: { status: true, effective_date: "2091-03-15" } })
          registry.state.down = true
          const down = yield* pass(day(16), org.id).pipe(Effect.ensuring(Effect.sync(() => (registry.state.down = false))))
          assert.deepStrictEqual([down.checked, down.unavailable, down.events.length], [0, 1, 0])
          assert.deepStrictEqual(eventsOf(org.id), [])
          // Still due the same day: the next pass finds the change.
          const back = yield* pass(day(16, 13), org.id)
          assert.deepStrictEqual(back.events.map((e) => e.kinds), [["struck_off"]])
        }))

      it.effect("passes at once check each contact once and send each change once", () =>
        Effect.gen(function*() {
          const org = yield* freshOrganization
          const made = yield* Effect.forEach(Array.from({ length: 5 }), () => customer(org.live))
          const baselines = yield* Effect.all([pass(day(14), org.id), pass(day(14), org.id), pass(day(14), org.id)], {
            concurrency: "unbounded"
          })
          assert.strictEqual(baselines.reduce((n, s) => n + s.checked, 0), 5)
          for (const c of made) {
            registry.statuses.set(c.vat_number!, { ...activeStatus(c.vat_number!), vat_registered: { status: false, effective_date: "2091-03-14" } })
          }
          const passes = yield* Effect.all([pass(day(15), org.id), pass(day(15), org.id), pass(day(15), org.id)], {
            concurrency: "unbounded"
          })
          const sent = passes.flatMap((s) => s.events.map((e) => e.event_id)).sort()
          assert.deepStrictEqual(sent, made.map((c) => fiscalStatusEventId(c.id, "vat_deregistered", "2091-03-14")).sort())
          for (const id of sent) assert.strictEqual(yield* countEvents(org.id, id), 1)
        }))

      it.effect("inside serve the check waits for the organization's hour, and comes again on its next date", () =>
        Effect.gen(function*() {
          const org = yield* freshOrganization
          yield* (yield* TenancyRepo).updateOrganization(org.id, { time_zone: "Europe/Bucharest" })
          yield* customer(org.live)
          const daily = { fromHour: 6 }
          // Bucharest is UTC+2 in March: 03:59 UTC is 05:59 there.
          assert.strictEqual((yield* pass(Date.UTC(2091, 2, 14, 3, 59), org.id, daily)).checked, 0)
          assert.strictEqual((yield* pass(Date.UTC(2091, 2, 14, 4, 0), org.id, daily)).checked, 1)
          assert.strictEqual((yield* pass(Date.UTC(2091, 2, 14, 21, 59), org.id, daily)).checked, 0)
          // 22:00 UTC is midnight of the 15th in Bucharest: a new date, but before the hour.
          assert.strictEqual((yield* pass(Date.UTC(2091, 2, 14, 22, 0), org.id, daily)).checked, 0)
          // On demand (no hour) it is due at once on the new date.
          assert.strictEqual((yield* pass(Date.UTC(2091, 2, 14, 22, 0), org.id)).checked, 1)
        }))

      it.effect("a claim that ran out goes to the next caller, and its late holder records nothing", () =>
        Effect.gen(function*() {
          const repo = yield* FiscalRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const contact = yield* customer(org.live)
          const scope = (claim: string, at: number) => ({
            timeZone: "UTC",
            today: "2091-03-14",
            at: new Date(at).toISOString(),
            until: new Date(at + 1000).toISOString(),
            claim,
            limit: 10,
            organizationId: org.id
          })
          const first = yield* ids.uuid
          const second = yield* ids.uuid
          assert.deepStrictEqual((yield* repo.claim(scope(first, day(14)))).map((c) => [c.contactId, c.cui]), [[contact.id, contact.vat_number]])
          assert.deepStrictEqual(yield* repo.claim(scope(second, day(14) + 500)), [])
          assert.strictEqual((yield* repo.claim(scope(second, day(14) + 1001))).length, 1)
          assert.isTrue(Option.isNone(yield* repo.lockClaimed(org.live, contact.id, first)))
          yield* repo.saveCheck(org.live, contact.id, first, {
            check_date: "2091-03-14",
            answered: { status: activeStatus("1"), checked_at: new Date(day(14)).toISOString() }
          })
          assert.isNull((yield* (yield* Contacts).get(org.live, contact.id)).fiscal_status)
          // Released, the contact is due again for anyone; recorded, it is not due again that date.
          yield* repo.release(second)
          const third = yield* ids.uuid
          assert.strictEqual((yield* repo.claim(scope(third, day(14) + 1002))).length, 1)
          assert.isTrue(Option.isSome(yield* repo.lockClaimed(org.live, contact.id, third)))
          yield* repo.saveCheck(org.live, contact.id, third, { check_date: "2091-03-14" })
          assert.deepStrictEqual(yield* repo.claim(scope(yield* ids.uuid, day(14) + 5000)), [])
        }))

      it.effect("a contact whose CUI changed starts from a new baseline; editing a contact keeps its status", () =>
        Effect.gen(function*() {
          const contacts = yield* Contacts
          const org = yield* freshOrganization
          const contact = yield* customer(org.live)
          yield* pass(day(14), org.id)
          const renamed = yield* contacts.update(org.live, contact.id, { name: "Client Nou SRL" })
          assert.deepStrictEqual(renamed.fiscal_status, activeStatus(contact.vat_number!))
          assert.deepStrictEqual((yield* contacts.get(org.live, contact.id)).fiscal_status, activeStatus(contact.vat_number!))
          const other = freshCui()
          registry.statuses.set(other, { ...activeStatus(other), inactive: { status: true, effective_date: "2091-01-01" } })
          yield* contacts.update(org.live, contact.id, { vat_number: other })
          const summary = yield* pass(day(15), org.id)
          assert.deepStrictEqual([summary.baselines, summary.events.length], [1, 0])
          assert.strictEqual((yield* contacts.get(org.live, contact.id)).fiscal_status?.cui, other)
        }))

      it.effect("a contact's history is its tenant's own", () =>
        Effect.gen(function*() {
          const org = yield* freshOrganization
          const stranger = yield* freshOrganization
          const contact = yield* customer(org.live)
          yield* pass(day(14), org.id)
          const fiscal = yield* Fiscal
          const page = yield* pageRequest({})
          assert.strictEqual((yield* fiscal.history(org.live, contact.id, page)).meta.total, 1)
          assert.strictEqual((yield* Effect.flip(fiscal.history(org.sandbox, contact.id, page)))._tag, "NotFound")
          assert.strictEqual((yield* Effect.flip(fiscal.history(stranger.live, contact.id, page)))._tag, "NotFound")
        }))
    })
  })
}
