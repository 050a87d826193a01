import { Effect, Layer, Option } from "effect"
import { DeviceRepo } from "@opsplatform/core/display/DeviceRepo"
import { DeviceFilter, type DeviceRecord } from "@opsplatform/core/display/model"
import { type BucketSum, type Measure } from "@opsplatform/core/display/pulse/figures"
import { bucketOf } from "@opsplatform/core/display/pulse/periods"
import { PulseRepo } from "@opsplatform/core/display/PulseRepo"
import type { Expense } from "@opsplatform/core/expenses/model"
import type { InvoiceRecord, PaymentRecord } from "@opsplatform/core/invoices/model"
import type { ObligationRecord } from "@opsplatform/core/obligations/model"
import type { RouteRecord } from "@opsplatform/core/routes/model"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"
import type { FleetVehicle } from "@opsplatform/core/fleet/model"

/** The memory twin of `DeviceRepo.layerSql`: deleted devices stay stored and are found by nothing. */
export const DeviceRepoMemory: Layer.Layer<DeviceRepo, never, MemoryStore> = Layer.effect(
  DeviceRepo,
  Effect.gen(function*() {
    const devices = memoryTenantTable<DeviceRecord>(yield* MemoryStore, "devices")
    const live = (tenant: Tenant, id: string) => Option.filter(devices.find(tenant, id), (d) => d.deleted_at === null)
    const change = <A>(tenant: Tenant, id: string, f: (d: DeviceRecord) => [DeviceRecord, A]): Option.Option<A> =>
      Option.map(live(tenant, id), (d) => {
        const [next, result] = f(d)
        devices.update(tenant, next)
        return result
      })
    return DeviceRepo.of({
      insert: (tenant, d) => Effect.sync(() => devices.insert(tenant, d)),
      find: (tenant, id) => Effect.sync(() => live(tenant, id)),
      list: (tenant, filter, page) =>
        Effect.sync(() =>
          devices.page(tenant, [(d) => d.deleted_at === null, ...filterPredicates(DeviceFilter, filter)], page)
        ),
      update: (tenant, d) =>
        Effect.sync(() =>
          Option.isSome(
            change(tenant, d.id, (current) => [
              { ...current, name: d.name, location_id: d.location_id, locale: d.locale, updated_at: d.updated_at },
              true
            ])
          )
        ),
      setPin: (tenant, id, pinHash, at) =>
        Effect.sync(() =>
          Option.isSome(
            change(tenant, id, (d) => [
              { ...d, pin_hash: pinHash, failed_pin_attempts: 0, unlock_disabled_at: null, updated_at: at },
              true
            ])
          )
        ),
      recordWrongPin: (tenant, id, threshold, at) =>
        Effect.sync(() =>
          change(tenant, id, (d) => {
            const consecutive = d.failed_pin_attempts + 1
            const disabledAt = d.unlock_disabled_at ?? (consecutive >= threshold ? at : null)
            return [
              { ...d, failed_pin_attempts: consecutive, unlock_disabled_at: disabledAt },
              { consecutive, disabled: disabledAt !== null }
            ]
          })
        ),
      recordRightPin: (tenant, id) =>
        Effect.sync(() => {
          change(tenant, id, (d) => [d.unlock_disabled_at === null ? { ...d, failed_pin_attempts: 0 } : d, undefined])
        }),
      remove: (tenant, id, at) =>
        Effect.sync(() =>
          Option.isSome(change(tenant, id, (d) => [{ ...d, deleted_at: at, pin_hash: null, updated_at: at }, true]))
        )
    })
  })
)

/** One row a measure reads: its date, currency, exchange rate and minor units. */
interface Contribution {
  readonly date: string
  readonly currency: string
  readonly rate: string | null
  readonly minor: bigint
}

const open = (i: InvoiceRecord) => i.status === "SENT" || i.status === "PARTIALLY_PAID"
const issued = (i: InvoiceRecord) => open(i) || i.status === "PAID" || i.status === "CREDITED"
const remaining = (i: InvoiceRecord) => BigInt(Math.max(0, i.total_minor - i.credited_minor - i.paid_minor))
/** "120.50" → 12050n: expense amounts have exactly two decimals. */
const expenseMinor = (amount: string) => BigInt(amount.replace(".", ""))

/**
 * The memory twin of `PulseRepo.layerSql`: the same figures, computed from the
 * memory tables of the areas it reads (no rollups to keep).
 */
export const PulseRepoMemory: Layer.Layer<PulseRepo, never, MemoryStore> = Layer.effect(
  PulseRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const invoices = memoryTenantTable<InvoiceRecord>(store, "invoices")
    const payments = memoryTenantTable<PaymentRecord>(store, "invoice_payments")
    const expenses = memoryTenantTable<Expense>(store, "expenses")
    const obligations = memoryTenantTable<ObligationRecord>(store, "contract_obligations")
    const routes = memoryTenantTable<RouteRecord>(store, "delivery_routes")
    const vehicles = memoryTenantTable<FleetVehicle>(store, "fleet_vehicles")
    const counted = (date: string | null): Array<Contribution> =>
      date === null ? [] : [{ date, currency: "", rate: null, minor: 0n }]
    const ofInvoice = (i: InvoiceRecord, date: string | null, minor: bigint): Array<Contribution> =>
      date === null ? [] : [{ date, currency: i.currency, rate: i.exchange_rate_ron, minor }]

    const contributions = (tenant: Tenant, measure: Measure): Array<Contribution> => {
      switch (measure) {
        case "invoiced":
          return invoices.filter(tenant, issued).flatMap((i) => ofInvoice(i, i.issue_date, BigInt(i.total_minor - i.credited_minor)))
        case "collected":
          return payments.filter(tenant, (p) => p.reversal_id === null).flatMap((p) =>
            Option.toArray(invoices.find(tenant, p.invoice_id)).flatMap((i) => ofInvoice(i, p.payment_date, BigInt(p.amount_minor)))
          )
        case "open_by_due_date":
          return invoices.filter(tenant, open).flatMap((i) => ofInvoice(i, i.due_date, remaining(i)))
        case "open_by_issue_date":
          return invoices.filter(tenant, open).flatMap((i) => ofInvoice(i, i.issue_date, remaining(i)))
        case "expenses":
          return expenses.filter(tenant, (e) => e.status === "submitted" || e.status === "approved" || e.status === "paid")
            .map((e) => ({ date: e.expense_date, currency: e.currency, rate: null, minor: expenseMinor(e.amount) }))
        case "obligations_pending":
          return obligations.filter(tenant, (o) => o.status === "pending").flatMap((o) => counted(o.due_date))
        case "obligations_due":
          return obligations.filter(tenant, (o) => o.status !== "cancelled").flatMap((o) => counted(o.due_date))
        case "routes_scheduled":
          return routes.filter(tenant, (r) => r.status !== "CANCELLED").flatMap((r) => counted(r.route_date))
        case "routes_in_progress":
          return routes.filter(tenant, (r) => r.status === "IN_PROGRESS").flatMap((r) => counted(r.route_date))
        case "routes_completed":
          return routes.filter(tenant, (r) => r.status === "COMPLETED").flatMap((r) => counted(r.completed_at))
        case "vehicles_active":
          return vehicles.filter(tenant, (v) => v.active).flatMap((v) => counted(v.created_at))
      }
    }

    return PulseRepo.of({
      sums: (tenant, query) =>
        Effect.sync(() => {
          const first = query.boundaries[0]!
          const last = query.boundaries[query.boundaries.length - 1]!
          const groups = new Map<string, { bucket: number; currency: string; rate: string | null; minor: bigint; count: number }>()
          for (const c of contributions(tenant, query.measure)) {
            if (query.mode === "flow" && (c.date < first || c.date >= last)) continue
            const bucket = bucketOf(c.date, query.boundaries)
            const key = `${bucket}/${c.currency}/${c.rate}`
            const group = groups.get(key) ?? { bucket, currency: c.currency, rate: c.rate, minor: 0n, count: 0 }
            groups.set(key, { ...group, minor: group.minor + c.minor, count: group.count + 1 })
          }
          return [...groups.values()].map((g): BucketSum => ({ ...g, minor: String(g.minor) }))
        }),
      // Memory computes every figure from the rows themselves: there is nothing to fold.
      compact: () => Effect.succeed(0)
    })
  })
)
