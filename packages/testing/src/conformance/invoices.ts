import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { ContactRepo } from "@opsplatform/core/contacts/ContactRepo"
import { Contacts } from "@opsplatform/core/contacts/Contacts"
import { creditedEventId, paymentEventId, reversalEventId } from "@opsplatform/core/events/catalog"
import { BankTransactions } from "@opsplatform/core/invoices/BankTransactions"
import { CreditNotes } from "@opsplatform/core/invoices/CreditNotes"
import { InvoiceRepo } from "@opsplatform/core/invoices/InvoiceRepo"
import { Invoices } from "@opsplatform/core/invoices/Invoices"
import { SubscriptionRepo } from "@opsplatform/core/metering/SubscriptionRepo"
import type { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { freshOrganization } from "./support.ts"

/** Notes that make the wrapped store's invoice update fail, to prove a failed issue leaves no trace. */
const FAIL_UPDATE = "fail the update"

/**
 * Contacts and invoices over one storage implementation: the services on
 * top of the ports, so the numbering, the locks, the balance columns and the
 * events behave the same on memory, PGlite and PostgreSQL.
 */
export const invoicesConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>,
  countEvents: (organizationId: string, eventId: string) => Effect.Effect<number, unknown, CoreLayers.StoragePorts | Ids>
) => {
  const failingUpdates = Layer.effect(
    InvoiceRepo,
    Effect.map(InvoiceRepo, (repo) =>
      InvoiceRepo.of({
        ...repo,
        update: (tenant, invoice) => invoice.notes === FAIL_UPDATE ? Effect.die("the store failed") : repo.update(tenant, invoice)
      }))
  )
  const services = Layer.mergeAll(Contacts.layer, CreditNotes.layer, BankTransactions.layer).pipe(
    Layer.provideMerge(Invoices.layer),
    Layer.provide(failingUpdates),
    Layer.provideMerge(storage)
  )

  const customer = (tenant: Tenant, vat: string | null = null) =>
    Effect.flatMap(Contacts, (contacts) =>
      contacts.create(tenant, { name: "Client SRL", kind: "customer", vat_number: vat }).pipe(Effect.orDie))

  const issued = (tenant: Tenant, options: { readonly amount?: string; readonly series?: string } = {}) =>
    Effect.gen(function*() {
      const invoices = yield* Invoices
      const contact = yield* customer(tenant)
      const draft = yield* invoices.create(tenant, {
        contact_id: contact.id,
        currency: "RON",
        lines: [{ description: "Services", quantity: "1", unit_price: options.amount ?? "100", vat_rate: 0 }]
      })
      return yield* invoices.issue(tenant, draft.id, { series: options.series ?? "FCT", issue_date: "2026-03-02" })
    }).pipe(Effect.orDie)

  return describe(`Invoices conformance: ${name}`, () => {
    layer(services, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("contacts: one per VAT number in a tenant, isolated, and kept while invoices name them", () =>
        Effect.gen(function*() {
          const contacts = yield* Contacts
          const repo = yield* ContactRepo
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const first = yield* contacts.create(a.live, { name: "Alpha SRL", kind: "customer", vat_number: "RO 18547290" })
          assert.strictEqual(first.vat_number, "18547290")
          const twin = yield* Effect.flip(contacts.create(a.live, { name: "Twin", kind: "both", vat_number: "18547290" }))
          assert.strictEqual(twin._tag, "Conflict")
          // Another environment or organization may hold the same number.
          yield* contacts.create(a.sandbox, { name: "Alpha", kind: "customer", vat_number: "18547290" })
          yield* contacts.create(b.live, { name: "Alpha", kind: "customer", vat_number: "18547290" })
          assert.isTrue(Option.isNone(yield* repo.find(b.sandbox, first.id)))
          const listed = yield* contacts.list(a.live, { vat_number: "RO18547290" }, yield* pageRequest({}))
          assert.deepStrictEqual(listed.items.map((c) => c.id), [first.id])
          const invoices = yield* Invoices
          yield* invoices.create(a.live, { contact_id: first.id, currency: "RON" })
          assert.strictEqual((yield* Effect.flip(contacts.remove(a.live, first.id)))._tag, "Conflict")
          assert.isTrue(Option.isSome(yield* repo.find(a.live, first.id)))
          // A usage subscription keeps its contact too (the SQL foreign key; a 409, never a 500).
          const metered = yield* customer(a.live)
          yield* (yield* SubscriptionRepo).insert(a.live, {
            id: crypto.randomUUID() as never,
            contact_id: metered.id,
            processor: "stripe",
            processor_customer_id: "cus_Conformance",
            meter_event_name: "api_requests",
            status: "active",
            created_at: metered.created_at,
            updated_at: metered.created_at
          })
          const inUse = yield* Effect.flip(contacts.remove(a.live, metered.id))
          assert.deepStrictEqual([inUse._tag, inUse.message], ["Conflict", "This contact has subscriptions; it cannot be deleted"])
          assert.isTrue(Option.isSome(yield* repo.find(a.live, metered.id)))
          const lonely = yield* customer(a.live)
          yield* contacts.remove(a.live, lonely.id)
          assert.strictEqual((yield* Effect.flip(contacts.get(a.live, lonely.id)))._tag, "NotFound")
        }))

      it.effect("numbers are gap-free per series and per tenant; a failed issue gives its number back", () =>
        Effect.gen(function*() {
          const invoices = yield* Invoices
          const org = yield* freshOrganization
          const other = yield* freshOrganization
          assert.strictEqual((yield* issued(org.live)).number, "FCT-000001")
          assert.strictEqual((yield* issued(org.live)).number, "FCT-000002")
          assert.strictEqual((yield* issued(org.live, { series: "EXP" })).number, "EXP-000001")
          assert.strictEqual((yield* issued(org.sandbox)).number, "FCT-000001")
          assert.strictEqual((yield* issued(other.live)).number, "FCT-000001")
          const contact = yield* customer(org.live)
          const doomed = yield* invoices.create(org.live, {
            contact_id: contact.id,
            currency: "RON",
            notes: FAIL_UPDATE,
            lines: [{ description: "x", quantity: "1", unit_price: "1", vat_rate: 0 }]
          })
          yield* Effect.exit(invoices.issue(org.live, doomed.id, { series: "FCT" }))
          assert.strictEqual((yield* invoices.get(org.live, doomed.id)).status, "DRAFT")
          assert.strictEqual((yield* issued(org.live)).number, "FCT-000003")
        }))

      it.effect("payment, reversal and credit write their rows, balance and event together", () =>
        Effect.gen(function*() {
          const invoices = yield* Invoices
          const credits = yield* CreditNotes
          const org = yield* freshOrganization
          const invoice = yield* issued(org.live, { amount: "1000" })
          const partial = yield* invoices.recordPayment(org.live, invoice.id, {
            amount: "400.00",
            payment_date: "2026-03-03",
            method: "BANK_TRANSFER",
            reference: "OP 17",
            source: "api"
          })
          assert.strictEqual(yield* countEvents(org.id, paymentEventId(partial.id)), 1)
          assert.deepStrictEqual(
            [(yield* invoices.get(org.live, invoice.id)).status, (yield* invoices.get(org.live, invoice.id)).remaining_amount],
            ["PARTIALLY_PAID", "600.00"]
          )
          const reversal = yield* invoices.reversePayment(org.live, invoice.id, partial.id, { reason: "bounced" })
          assert.strictEqual(yield* countEvents(org.id, reversalEventId(reversal.id)), 1)
          assert.strictEqual((yield* Effect.flip(invoices.reversePayment(org.live, invoice.id, partial.id, {})))._tag, "Conflict")
          assert.strictEqual((yield* invoices.get(org.live, invoice.id)).status, "SENT")
          const note = yield* credits.issue(org.live, invoice.id, { reason: "discount", amount: "250" })
          assert.strictEqual(note.number, "FCT-000002")
          assert.strictEqual(yield* countEvents(org.id, creditedEventId(invoice.id, 25_000)), 1)
          const paid = yield* invoices.markPaid(org.live, invoice.id, {})
          assert.strictEqual(paid.amount, "750.00")
          const settled = yield* invoices.get(org.live, invoice.id)
          assert.deepStrictEqual(
            [settled.status, settled.paid_amount, settled.remaining_amount, settled.refund_due],
            ["PAID", "750.00", "0.00", "0.00"]
          )
          assert.isNotNull(settled.paid_at)
          yield* credits.cancel(org.live, note.id)
          assert.strictEqual(yield* countEvents(org.id, creditedEventId(invoice.id, 0)), 1)
          assert.strictEqual((yield* invoices.get(org.live, invoice.id)).status, "PARTIALLY_PAID")
        }))

      it.effect("money never goes beyond the balance, not even from two payments at once", () =>
        Effect.gen(function*() {
          const invoices = yield* Invoices
          const org = yield* freshOrganization
          const invoice = yield* issued(org.live, { amount: "100" })
          const pay = invoices.recordPayment(org.live, invoice.id, {
            amount: "60",
            payment_date: "2026-03-03",
            method: "CASH",
            reference: "",
            source: "receipt"
          })
          const outcomes = yield* Effect.all([Effect.exit(pay), Effect.exit(pay)], { concurrency: 2 })
          assert.strictEqual(outcomes.filter((o) => o._tag === "Success").length, 1)
          const after = yield* invoices.get(org.live, invoice.id)
          assert.deepStrictEqual([after.paid_amount, after.remaining_amount], ["60.00", "40.00"])
          const refused = yield* Effect.flip(invoices.refund(org.live, invoice.id, {
            amount: "1",
            refund_date: "2026-03-04",
            method: "CASH"
          }))
          assert.strictEqual(refused._tag, "Unprocessable")
        }))

      it.effect("the overdue filter reads the organization's today", () =>
        Effect.gen(function*() {
          const invoices = yield* Invoices
          const org = yield* freshOrganization
          const contact = yield* customer(org.live)
          const make = (due: string) =>
            Effect.flatMap(
              invoices.create(org.live, {
                contact_id: contact.id,
                currency: "RON",
                lines: [{ description: "x", quantity: "1", unit_price: "10", vat_rate: 21 }]
              }),
              (d) => invoices.issue(org.live, d.id, { series: "OV", issue_date: "2000-01-01", due_date: due })
            )
          const late = yield* make("2000-01-31")
          const future = yield* make("2999-01-01")
          const page = yield* pageRequest({})
          assert.deepStrictEqual((yield* invoices.list(org.live, { overdue: true }, page)).items.map((i) => i.id), [late.id])
          assert.deepStrictEqual(
            (yield* invoices.list(org.live, { overdue: false }, page)).items.map((i) => i.id),
            [future.id]
          )
        }))
    })
  })
}
