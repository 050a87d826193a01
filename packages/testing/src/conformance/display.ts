import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import type { CoreLayers } from "@opsplatform/core"
import { CredentialRepo } from "@opsplatform/core/auth/CredentialRepo"
import { CredentialId, type StoredCredential } from "@opsplatform/core/auth/model"
import { Contacts } from "@opsplatform/core/contacts/Contacts"
import { ContractRepo } from "@opsplatform/core/contracts/ContractRepo"
import { ContractId } from "@opsplatform/core/contracts/model"
import { DeviceRepo } from "@opsplatform/core/display/DeviceRepo"
import { DeviceId, type DeviceRecord } from "@opsplatform/core/display/model"
import type { Kpi } from "@opsplatform/core/display/model"
import { Pulse } from "@opsplatform/core/display/Pulse"
import { PulseRepo } from "@opsplatform/core/display/PulseRepo"
import { presentDevice, UNLOCK_DISABLED_AFTER } from "@opsplatform/core/display/rules"
import { ExpenseRepo } from "@opsplatform/core/expenses/ExpenseRepo"
import { type Expense, ExpenseId } from "@opsplatform/core/expenses/model"
import { FleetRepo } from "@opsplatform/core/fleet/FleetRepo"
import { VehicleId } from "@opsplatform/core/fleet/model"
import { Invoices } from "@opsplatform/core/invoices/Invoices"
import { ObligationRepo } from "@opsplatform/core/obligations/ObligationRepo"
import { RouteRepo } from "@opsplatform/core/routes/RouteRepo"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"
import { obligation } from "./obligations.ts"
import { routeRecord } from "./routes.ts"
import { freshOrganization, timestamps } from "./support.ts"

type Storage = Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>

const deviceRecord = (id: string, at: string, overrides: Partial<DeviceRecord> = {}): DeviceRecord => ({
  id: DeviceId.make(id),
  name: "Lobby",
  location_id: null,
  locale: "ro",
  pin_hash: null,
  failed_pin_attempts: 0,
  unlock_disabled_at: null,
  deleted_at: null,
  created_at: at,
  updated_at: at,
  ...overrides
})

/** The DeviceRepo contract, and the one read the credentials store makes of devices. */
export const deviceRepoConformance = (name: string, storage: Storage) =>
  describe(`DeviceRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("keeps devices per tenant with their PIN hash", () =>
        Effect.gen(function*() {
          const repo = yield* DeviceRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const device = deviceRecord(yield* ids.uuid, t0!)
          yield* repo.insert(org.live, device)
          assert.deepStrictEqual(yield* repo.find(org.live, device.id), Option.some(device))
          assert.isTrue(Option.isNone(yield* repo.find(org.sandbox, device.id)))
          assert.isFalse(yield* repo.setPin(org.sandbox, device.id, "$pin", t1!))
          assert.isTrue(yield* repo.setPin(org.live, device.id, "$pin", t1!))
          const stored = Option.getOrThrow(yield* repo.find(org.live, device.id))
          assert.strictEqual(stored.pin_hash, "$pin")
          assert.strictEqual(stored.updated_at, t1)
          assert.isTrue(presentDevice(stored).pin_set)
          // The credentials store sees the device in its tenant only, and no longer once deleted.
          const credentials = yield* CredentialRepo
          assert.isTrue(yield* credentials.deviceExists(org.live, device.id))
          assert.isFalse(yield* credentials.deviceExists(org.sandbox, device.id))
          assert.isFalse(yield* repo.remove(org.sandbox, device.id, t1!))
          assert.isTrue(yield* repo.remove(org.live, device.id, t1!))
          assert.isTrue(Option.isNone(yield* repo.find(org.live, device.id)))
          assert.isFalse(yield* credentials.deviceExists(org.live, device.id))
          assert.isFalse(yield* repo.setPin(org.live, device.id, "$pin", t1!))
          assert.isFalse(yield* repo.remove(org.live, device.id, t1!))
        }))

      it.effect("lists live devices newest first, by location; updates only name, location and locale", () =>
        Effect.gen(function*() {
          const repo = yield* DeviceRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const at = timestamps(4)
          const made: Array<DeviceRecord> = []
          for (let i = 0; i < 3; i++) {
            const device = deviceRecord(yield* ids.uuid, at[i]!)
            yield* repo.insert(org.live, device)
            made.push(device)
          }
          yield* repo.remove(org.live, made[1]!.id, at[3]!)
          const page = yield* pageRequest({})
          assert.deepStrictEqual((yield* repo.list(org.live, {}, page)).items.map((d) => d.id), [made[2]!.id, made[0]!.id])
          assert.strictEqual((yield* repo.list(org.sandbox, {}, page)).meta.total, 0)
          const renamed = { ...made[0]!, name: "Kitchen", locale: "en" as const, pin_hash: "$ignored", updated_at: at[3]! }
          assert.isTrue(yield* repo.update(org.live, renamed))
          const stored = Option.getOrThrow(yield* repo.find(org.live, renamed.id))
          assert.deepStrictEqual([stored.name, stored.locale, stored.pin_hash, stored.updated_at], ["Kitchen", "en", null, at[3]])
          assert.isFalse(yield* repo.update(org.live, { ...made[1]!, name: "Deleted" }))
        }))

      it.effect("counts wrong PINs in a row, disables at the threshold, and a new PIN starts afresh", () =>
        Effect.gen(function*() {
          const repo = yield* DeviceRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const device = deviceRecord(yield* ids.uuid, t0!, { pin_hash: "$pin" })
          yield* repo.insert(org.live, device)
          // Concurrent wrong PINs are each counted once.
          const counts = yield* Effect.forEach(
            Array.from({ length: UNLOCK_DISABLED_AFTER - 1 }),
            () => repo.recordWrongPin(org.live, device.id, UNLOCK_DISABLED_AFTER, t1!),
            { concurrency: 4 }
          )
          assert.deepStrictEqual(
            counts.map((c) => Option.getOrThrow(c).consecutive).sort((x, y) => x - y),
            Array.from({ length: UNLOCK_DISABLED_AFTER - 1 }, (_, i) => i + 1)
          )
          assert.isTrue(counts.every((c) => !Option.getOrThrow(c).disabled))
          // A right PIN ends the run.
          yield* repo.recordRightPin(org.live, device.id)
          assert.strictEqual(Option.getOrThrow(yield* repo.find(org.live, device.id)).failed_pin_attempts, 0)
          for (let i = 1; i < UNLOCK_DISABLED_AFTER; i++) yield* repo.recordWrongPin(org.live, device.id, UNLOCK_DISABLED_AFTER, t1!)
          const tenth = Option.getOrThrow(yield* repo.recordWrongPin(org.live, device.id, UNLOCK_DISABLED_AFTER, t1!))
          assert.deepStrictEqual(tenth, { consecutive: UNLOCK_DISABLED_AFTER, disabled: true })
          const locked = Option.getOrThrow(yield* repo.find(org.live, device.id))
          assert.strictEqual(locked.unlock_disabled_at, t1)
          // Once disabled, a right PIN does not lift it; a new PIN does.
          yield* repo.recordRightPin(org.live, device.id)
          assert.isTrue(presentDevice(Option.getOrThrow(yield* repo.find(org.live, device.id))).unlock_disabled)
          assert.isTrue(Option.isNone(yield* repo.recordWrongPin(org.sandbox, device.id, UNLOCK_DISABLED_AFTER, t1!)))
          yield* repo.setPin(org.live, device.id, "$new", t1!)
          const fresh = Option.getOrThrow(yield* repo.find(org.live, device.id))
          assert.deepStrictEqual([fresh.failed_pin_attempts, fresh.unlock_disabled_at, fresh.pin_hash], [0, null, "$new"])
        }))

      it.effect("revokes every live token of a device, in its tenant only", () =>
        Effect.gen(function*() {
          const repo = yield* DeviceRepo
          const credentials = yield* CredentialRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const device = deviceRecord(yield* ids.uuid, t0!)
          yield* repo.insert(org.live, device)
          const token = (): Effect.Effect<StoredCredential> =>
            Effect.map(ids.uuid, (id) => ({
              id: CredentialId.make(id),
              organization_id: org.id,
              environment: "live",
              kind: "device",
              name: null,
              token_hash: `h-${id}`,
              token_prefix: "svc_dt_abcd",
              scopes: ["display:read"],
              user_id: null,
              device_id: device.id,
              app_id: null,
              grant_id: null,
              created_at: t0!,
              last_used_at: null,
              expires_at: null,
              revoked_at: null
            }))
          const first = yield* token()
          const second = yield* token()
          yield* credentials.insert(org.live, first)
          yield* credentials.insert(org.live, second)
          assert.deepStrictEqual(yield* credentials.revokeDevice(org.sandbox, device.id, t1!), [])
          const revoked = yield* credentials.revokeDevice(org.live, device.id, t1!)
          assert.deepStrictEqual(revoked.map((c) => c.id).sort(), [first.id, second.id].sort())
          assert.isTrue(revoked.every((c) => c.revoked_at === t1))
          assert.deepStrictEqual(yield* credentials.revokeDevice(org.live, device.id, t1!), [])
        }))
    })
  })

/**
 * The pulse's figures over one storage, against amounts computed by hand. The
 * clock stands at 00:30 on 1 April 2026 in Bucharest — still 31 March in UTC —
 * so every figure is read in the organization's time zone or it fails.
 */
export const pulseConformance = (name: string, storage: Storage) => {
  const services = Layer.mergeAll(Contacts.layer, Pulse.layer).pipe(
    Layer.provideMerge(Invoices.layer),
    Layer.provideMerge(storage)
  )

  /** 2026-03-31T21:30Z: 2026-04-01 00:30 in Bucharest (EEST, UTC+3), a Wednesday. */
  const NOW = Date.UTC(2026, 2, 31, 21, 30)

  const seed = Effect.gen(function*() {
    const org = yield* freshOrganization
    yield* (yield* TenancyRepo).updateOrganization(org.id, { time_zone: "Europe/Bucharest" })
    const t = org.live
    const ids = yield* Ids
    const invoices = yield* Invoices
    const contact = yield* (yield* Contacts).create(t, { name: "Client SRL", kind: "customer" })
    const invoice = (currency: string, amount: string, dates: { issue_date: string; due_date: string }, rate?: string) =>
      Effect.gen(function*() {
        const draft = yield* invoices.create(t, {
          contact_id: contact.id,
          currency,
          lines: [{ description: "Services", quantity: "1", unit_price: amount, vat_rate: 0 }]
        })
        return yield* invoices.issue(t, draft.id, { series: "PLS", ...dates, ...(rate ? { exchange_rate_ron: rate } : {}) })
      })
    const pay = (id: string, amount: string, payment_date: string) =>
      invoices.recordPayment(t, id, { amount, payment_date, method: "BANK_TRANSFER", source: "manual" })
    // Invoices: A today; B in EUR yesterday (Bucharest), due yesterday; C in March, partly paid; E in February, paid today.
    const a = yield* invoice("RON", "1000.00", { issue_date: "2026-04-01", due_date: "2026-04-15" })
    const b = yield* invoice("EUR", "200.00", { issue_date: "2026-03-31", due_date: "2026-03-31" }, "4.9763")
    const c = yield* invoice("RON", "500.00", { issue_date: "2026-03-02", due_date: "2026-03-16" })
    const e = yield* invoice("RON", "300.00", { issue_date: "2026-02-10", due_date: "2026-02-20" })
    yield* invoices.create(t, {
      contact_id: contact.id,
      currency: "RON",
      issue_date: "2026-04-01",
      lines: [{ description: "Draft", quantity: "1", unit_price: "777", vat_rate: 0 }]
    })
    yield* pay(c.id, "100.00", "2026-03-20")
    const reversed = yield* pay(c.id, "50.00", "2026-04-01")
    yield* invoices.reversePayment(t, c.id, reversed.id, {})
    yield* pay(b.id, "10.00", "2026-03-30")
    yield* pay(e.id, "300.00", "2026-04-01")
    yield* pay(a.id, "250.00", "2026-04-01")

    // Expenses: only submitted, approved and paid count; only RON is summed.
    const expenses = yield* ExpenseRepo
    const at = timestamps(1)[0]!
    const expense = (amount: string, currency: string, expense_date: string, status: Expense["status"]) =>
      Effect.flatMap(ids.uuid, (id) =>
        expenses.insert(t, {
          id: ExpenseId.make(id),
          description: "Pulse",
          category: "other",
          status,
          amount,
          currency,
          expense_date,
          location_id: null,
          created_at: at,
          updated_at: at
        }))
    yield* expense("120.50", "RON", "2026-04-01", "approved")
    yield* expense("80.00", "RON", "2026-03-31", "submitted")
    yield* expense("10.00", "EUR", "2026-04-01", "paid")
    yield* expense("999.00", "RON", "2026-04-01", "draft")
    yield* expense("40.00", "RON", "2026-04-01", "rejected")

    // Obligations: overdue, due this week, done this week, later, cancelled.
    const contractId = ContractId.make(yield* ids.uuid)
    yield* (yield* ContractRepo).insert(t, { id: contractId, name: "Pulse contract", created_at: at, updated_at: at })
    const obligations = yield* ObligationRepo
    for (const spec of [
      { due_date: "2026-03-31", status: "pending" },
      { due_date: "2026-04-03", status: "pending" },
      { due_date: "2026-04-02", status: "completed" },
      { due_date: "2026-04-20", status: "pending" },
      { due_date: "2026-04-01", status: "cancelled" }
    ] as const) {
      yield* obligations.insert(t, obligation(yield* ids.uuid, contractId, at, spec))
    }

    // Routes, by their local dates: today 00:30, yesterday 23:30 (in progress), completed at 00:10 today, cancelled.
    const routes = yield* RouteRepo
    const route = (n: string, overrides: Parameters<typeof routeRecord>[3]) =>
      Effect.flatMap(ids.uuid, (id) => routes.insert(t, routeRecord(id, `PLS-${n}-${id.slice(-6)}`, at, overrides)))
    yield* route("1", { status: "PLANNED", route_date: "2026-03-31T21:30:00.000Z" })
    yield* route("2", { status: "IN_PROGRESS", route_date: "2026-03-31T20:30:00.000Z" })
    yield* route("3", { status: "COMPLETED", route_date: "2026-04-01T06:00:00.000Z", completed_at: "2026-03-31T21:10:00.000Z" })
    yield* route("4", { status: "CANCELLED", route_date: "2026-04-01T08:00:00.000Z" })

    // Fleet: two active vehicles registered in different weeks, one inactive.
    const fleet = yield* FleetRepo
    const vehicle = (plate: string, active: boolean, created_at: string) =>
      Effect.flatMap(ids.uuid, (id) =>
        Effect.orDie(fleet.insert(t, {
          id: VehicleId.make(id),
          plate: `${plate}${id.slice(-3).toUpperCase().replace(/[^A-Z]/g, "X").padEnd(3, "X")}`,
          make: null,
          model: null,
          fuel_type: "diesel",
          capacity_kg: null,
          capacity_parcels: null,
          fuel_consumption_l_per_100km: null,
          active,
          created_at,
          updated_at: created_at
        })))
    yield* vehicle("B101", true, "2026-01-05T10:00:00.000Z")
    yield* vehicle("B102", true, "2026-03-31T22:00:00.000Z")
    yield* vehicle("B103", false, "2026-03-31T22:00:00.000Z")
    return t
  })

  const ask = (tenant: Tenant, text: string, locale: "ro" | "en" = "en") =>
    Effect.flatMap(Pulse, (pulse) => pulse.answer(tenant, text, locale))

  const kpiOf = (answer: { readonly kpi: Kpi | null }) => {
    assert.isNotNull(answer.kpi)
    return answer.kpi!
  }

  return describe(`Pulse figures conformance: ${name}`, () => {
    layer(services, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("reads every figure in the organization's time zone, across midnight and a month's end", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(NOW)
          const t = yield* seed
          const figure = (text: string) => Effect.map(ask(t, text), (a) => {
            const k = kpiOf(a)
            return [k.id, k.value.minor, k.count, k.delta, [...k.spark], k.tone, k.unit]
          })
          // Collected: E 300 + A 250 today; B's 10 EUR at 4.9763 = 49.763 → 49.76 on Monday; C's 100 in March.
          // The 50 paid and reversed today is not collected.
          assert.deepStrictEqual(yield* figure("How much did we collect today?"), [
            "collected_today", 55000, 2, 55000, [0, 0, 0, 0, 4976, 0, 55000], "positive", "money"
          ])
          assert.deepStrictEqual(yield* figure("How much did we collect this week?"), [
            "collected_week", 59976, 3, 59976, [0, 0, 0, 0, 10000, 0, 59976], "positive", "money"
          ])
          assert.deepStrictEqual(yield* figure("How much did we collect last month?"), [
            "collected_last_month", 14976, 2, 14976, [0, 0, 0, 0, 0, 0, 14976], "positive", "money"
          ])
          // Invoiced, net: A 1000 (April); B 200 EUR = 995.26 and C 500 (March); E 300 (February). Drafts do not count.
          assert.deepStrictEqual(yield* figure("What did we invoice this month?"), [
            "invoiced_month", 100000, 1, 100000 - 149526, [0, 0, 0, 0, 30000, 149526, 100000], "neutral", "money"
          ])
          assert.deepStrictEqual(yield* figure("Revenue today"), [
            "invoiced_today", 100000, 1, 100000 - 99526, [0, 0, 0, 0, 0, 99526, 100000], "positive", "money"
          ])
          // Overdue as of 1 April: B (190 EUR left = 945.497 → 945.50, due 31 March) and C (400 left, due 16 March).
          assert.deepStrictEqual(yield* figure("How many invoices are overdue?"), [
            "invoices_overdue", 134550, 2, 94550, [0, 0, 0, 0, 40000, 0, 94550], "negative", "money"
          ])
          // Open: A 750, B 945.50, C 400 — by issue month.
          assert.deepStrictEqual(yield* figure("What is our open balance?"), [
            "open_balance", 209550, 3, 75000 - 134550, [0, 0, 0, 0, 0, 134550, 75000], "neutral", "money"
          ])
          // Expenses: 120.50 RON in April (the EUR one counted apart), 80 RON in March.
          const april = yield* ask(t, "How much did we spend this month?")
          assert.deepStrictEqual([kpiOf(april).value.minor, kpiOf(april).count, [...kpiOf(april).spark]], [
            12050, 1, [0, 0, 0, 0, 0, 8000, 12050]
          ])
          assert.include(april.answer, "1 expense in other currencies")
          // Obligations: pending ones are open; one is overdue (31 March); one is still due this week (3 April).
          assert.deepStrictEqual((yield* figure("Open obligations"))[2], 3)
          assert.deepStrictEqual(yield* figure("Which obligations are overdue?"), [
            "obligations_overdue", 0, 1, 1, [0, 0, 0, 0, 0, 0, 1], "negative", "count"
          ])
          assert.deepStrictEqual(yield* figure("Obligations due this week"), [
            "obligations_due_week", 0, 1, 3, [0, 0, 0, 0, 0, 0, 3], "warning", "count"
          ])
          // Routes by local date: two today (00:30, and the one completed at 00:10), one in progress since yesterday.
          assert.deepStrictEqual(yield* figure("How many routes today?"), [
            "routes_today", 0, 2, 1, [0, 0, 0, 0, 0, 1, 2], "neutral", "count"
          ])
          assert.deepStrictEqual((yield* figure("Routes in progress"))[2], 1)
          assert.deepStrictEqual((yield* figure("Routes completed today"))[2], 1)
          // Active vehicles: the one from January joins the first week, the one registered this week the last.
          assert.deepStrictEqual(yield* figure("How many vehicles are active?"), [
            "vehicles_active", 0, 2, 1, [1, 0, 0, 0, 0, 0, 1], "neutral", "count"
          ])
          assert.strictEqual((yield* ask(t, "câte vehicule active avem?", "ro")).answer, "Aveți 2 vehicule active în flotă.")
          // Romanian, in lei.
          const ro = yield* ask(t, "cât am încasat luna asta?", "ro")
          assert.strictEqual(ro.answer, "Luna aceasta ați încasat 550,00 lei din 2 plăți.")
          assert.strictEqual(kpiOf(ro).label, "Încasat luna aceasta")

          // Folding the rollups changes no figure; a change after it is counted at once.
          const all = [
            "collected today", "collected this week", "collected last month", "invoiced this month", "invoiced today",
            "overdue invoices", "open balance", "expenses this month", "expenses last month"
          ]
          const before = yield* Effect.forEach(all, (q) => Effect.map(ask(t, q), (a) => a.kpi))
          yield* (yield* PulseRepo).compact(100_000)
          assert.deepStrictEqual(yield* Effect.forEach(all, (q) => Effect.map(ask(t, q), (a) => a.kpi)), before)
          const expenses = yield* ExpenseRepo
          const draft = (yield* expenses.list(t, { status: "draft" }, yield* pageRequest({}))).items[0]!
          yield* expenses.update(t, { ...draft, status: "submitted", amount: "1.00" })
          assert.deepStrictEqual([kpiOf(yield* ask(t, "expenses this month")).value.minor], [12150])
        }).pipe(Effect.provide(TestClock.layer())))
    })
  })
}
