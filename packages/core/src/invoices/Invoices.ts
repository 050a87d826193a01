import { Clock, Context, Effect, Layer } from "effect"
import { ContactRepo } from "../contacts/ContactRepo.ts"
import { Outbox } from "../events/Outbox.ts"
import {
  Conflict,
  InvalidTransition,
  type NotFound,
  Unprocessable,
  ValidationFailed
} from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import { formatMinor } from "../shared/money.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { organizationToday } from "../tenancy/calendar.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import { InvoiceRepo } from "./InvoiceRepo.ts"
import {
  type Invoice,
  type InvoiceCreate,
  type InvoiceFilter,
  InvoiceId,
  type InvoiceIssue,
  type InvoiceRecord,
  type InvoiceUpdate,
  type Payment,
  PaymentId,
  type PaymentInput,
  type PaymentMethod,
  type PaymentRecord,
  type Refund,
  type RefundCreate,
  RefundId,
  type RefundRecord,
  type Reversal,
  type ReversalCreate,
  ReversalId,
  type ReversalRecord
} from "./model.ts"
import { PaymentRepo } from "./PaymentRepo.ts"
import { paymentEvent, reversalEvent } from "./events.ts"
import { amountIn, pricedLines } from "./inputs.ts"
import { presentInvoice, presentPayment, presentRefund, presentReversal } from "./present.ts"
import { acceptsMoney, balanceOf, formatInvoiceNumber, invoiceLifecycle, totalsOf, withBalance } from "./rules.ts"

/** What recording or returning money can fail with. */
type PaymentErrors = NotFound | InvalidTransition | Unprocessable | ValidationFailed

/**
 * Invoices of an organization environment: drafts, issuing with a gap-free
 * number per series, voiding, and every movement of money against them.
 * `recordPayment` is the only way a payment is recorded, whatever the path
 * (`source`): the API, mark-paid, a matched bank line, a card processor, a
 * bill of exchange, a collective receipt… so every path writes the same rows
 * and publishes the same event in the same transaction.
 */
export class Invoices extends Context.Service<Invoices, {
  readonly create: (tenant: Tenant, input: InvoiceCreate) => Effect.Effect<Invoice, NotFound | ValidationFailed>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Invoice, NotFound>
  readonly list: (tenant: Tenant, filter: InvoiceFilter, page: PageRequest) => Effect.Effect<Page<Invoice>, ValidationFailed>
  readonly update: (tenant: Tenant, id: string, patch: InvoiceUpdate) => Effect.Effect<Invoice, NotFound | ValidationFailed | InvalidTransition>
  readonly issue: (tenant: Tenant, id: string, input: InvoiceIssue) => Effect.Effect<Invoice, NotFound | ValidationFailed | InvalidTransition | Unprocessable | Conflict>
  readonly void: (tenant: Tenant, id: string) => Effect.Effect<Invoice, NotFound | InvalidTransition | Conflict>
  /** The one way money is recorded against an invoice, whatever its path (`source`). */
  readonly recordPayment: (tenant: Tenant, id: string, input: PaymentInput) => Effect.Effect<Payment, PaymentErrors>
  /** Records the remaining balance as paid (`source` mark_paid). */
  readonly markPaid: (
    tenant: Tenant,
    id: string,
    input: {
      readonly payment_date?: string | undefined
      readonly method?: PaymentMethod | undefined
      readonly reference?: string | undefined
    }
  ) => Effect.Effect<Payment, PaymentErrors>
  readonly listPayments: (tenant: Tenant, id: string) => Effect.Effect<ReadonlyArray<Payment>, NotFound>
  readonly reversePayment: (
    tenant: Tenant,
    id: string,
    paymentId: string,
    input: ReversalCreate
  ) => Effect.Effect<Reversal, NotFound | Conflict>
  /** Money paid back; at most what was paid beyond the net total. Emits no event. */
  readonly refund: (tenant: Tenant, id: string, input: RefundCreate) => Effect.Effect<Refund, PaymentErrors>
  readonly listRefunds: (tenant: Tenant, id: string) => Effect.Effect<ReadonlyArray<Refund>, NotFound>
}>()("@opsplatform/core/invoices/Invoices") {
  static readonly layer: Layer.Layer<
    Invoices,
    never,
    InvoiceRepo | PaymentRepo | ContactRepo | TenancyRepo | Outbox | Ids | Transactor
  > = Layer.effect(
    Invoices,
    Effect.gen(function*() {
      const invoices = yield* InvoiceRepo
      const payments = yield* PaymentRepo
      const contacts = yield* ContactRepo
      const tenancy = yield* TenancyRepo
      const outbox = yield* Outbox
      const ids = yield* Ids
      const tx = yield* Transactor

      const find = (tenant: Tenant, id: string, forUpdate = false) =>
        findOr404("invoice", id, (id) => invoices.find(tenant, id, { forUpdate }))
      /** The invoice, locked for the rest of the transaction. */
      const locked = (tenant: Tenant, id: string) => find(tenant, id, true)
      const today = (tenant: Tenant) => organizationToday(tenancy, tenant.organizationId)
      const findPayment = (tenant: Tenant, invoiceId: string, paymentId: string) =>
        findOr404("payment", paymentId, (id) => payments.findPayment(tenant, invoiceId, id))
      const acceptingMoney = (invoice: InvoiceRecord) =>
        acceptsMoney(invoice.status)
          ? Effect.void
          : Effect.fail(new InvalidTransition({ resource: "invoice", from: invoice.status, to: "PAID" }))
      const now = Effect.map(Clock.currentTimeMillis, isoFromMillis)

      /** The one way money is recorded against an invoice, whatever its path. */
      const recordPayment: Invoices["Service"]["recordPayment"] = Effect.fn("Invoices.recordPayment")(function*(tenant, id, input) {
        return yield* tx.withTransaction(Effect.gen(function*() {
          const invoice = yield* locked(tenant, id)
          yield* acceptingMoney(invoice)
          const amount = yield* amountIn(input.amount, invoice.currency)
          const { remaining_minor } = balanceOf(invoice)
          if (amount > remaining_minor) {
            return yield* new Unprocessable({
              errorCode: "payment_exceeds_balance",
              reason: `The payment exceeds the remaining balance of the invoice (${remaining_minor} minor units of ${invoice.currency})`
            })
          }
          const at = yield* now
          const payment: PaymentRecord = {
            id: yield* newId(ids, PaymentId),
            invoice_id: invoice.id,
            amount_minor: amount,
            payment_date: input.payment_date,
            method: input.method,
            reference: input.reference ?? "",
            source: input.source,
            reversal_id: null,
            created_at: at
          }
          const next = withBalance(invoice, { paid_minor: invoice.paid_minor + payment.amount_minor }, at)
          yield* payments.insertPayment(tenant, payment)
          yield* invoices.update(tenant, next).pipe(Effect.orDie)
          yield* outbox.publish(tenant, paymentEvent(next, payment))
          return presentPayment(payment, invoice.currency)
        }))
      })

      const checkContact = (tenant: Tenant, id: string) => Effect.asVoid(findOr404("contact", id, (id) => contacts.find(tenant, id)))
      const refuse = (from: InvoiceRecord["status"], to: string) => new InvalidTransition({ resource: "invoice", from, to })
      const datesInOrder = (issue: string | null, due: string | null) =>
        issue !== null && due !== null && due < issue
          ? Effect.fail(ValidationFailed.field("due_date", "must not be before issue_date"))
          : Effect.void

      return Invoices.of({
        create: Effect.fn("Invoices.create")(function*(tenant, input) {
          yield* checkContact(tenant, input.contact_id)
          const lines = yield* pricedLines(input.lines ?? [], input.currency)
          const at = yield* now
          const record: InvoiceRecord = {
            id: yield* newId(ids, InvoiceId),
            series: null,
            number: null,
            status: "DRAFT",
            contact_id: input.contact_id as InvoiceRecord["contact_id"],
            currency: input.currency,
            issue_date: input.issue_date ?? null,
            due_date: input.due_date ?? null,
            exchange_rate_ron: input.exchange_rate_ron ?? null,
            notes: input.notes ?? null,
            issued_at: null,
            voided_at: null,
            paid_at: null,
            created_at: at,
            updated_at: at,
            lines,
            ...totalsOf(lines),
            credited_minor: 0,
            paid_minor: 0
          }
          yield* datesInOrder(record.issue_date, record.due_date)
          yield* invoices.insert(tenant, record)
          return presentInvoice(record)
        }),
        get: (tenant, id) => Effect.map(find(tenant, id), presentInvoice),
        list: Effect.fn("Invoices.list")(function*(tenant, filter, page) {
          if (filter.issue_date_from !== undefined && filter.issue_date_to !== undefined && filter.issue_date_from > filter.issue_date_to) {
            return yield* ValidationFailed.field("issue_date_to", "must not be before issue_date_from")
          }
          const found = yield* invoices.list(tenant, filter, yield* today(tenant), page)
          return { items: found.items.map(presentInvoice), meta: found.meta }
        }),
        update: Effect.fn("Invoices.update")(function*(tenant, id, patch) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* find(tenant, id, true)
            if (current.status !== "DRAFT") return yield* refuse(current.status, "DRAFT")
            if (patch.contact_id !== undefined) yield* checkContact(tenant, patch.contact_id)
            const { lines: given, ...fields } = patch
            const currency = patch.currency ?? current.currency
            // A new currency re-prices the lines: their amounts are in its minor unit.
            const lines = yield* pricedLines(given ?? current.lines, currency)
            const next: InvoiceRecord = {
              ...current,
              ...fields,
              contact_id: (patch.contact_id ?? current.contact_id) as InvoiceRecord["contact_id"],
              lines,
              ...totalsOf(lines),
              updated_at: yield* now
            }
            yield* datesInOrder(next.issue_date, next.due_date)
            yield* invoices.update(tenant, next).pipe(Effect.orDie)
            return presentInvoice(next)
          }))
        }),
        issue: Effect.fn("Invoices.issue")(function*(tenant, id, input) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* find(tenant, id, true)
            const to = invoiceLifecycle.target(current.status, "issue")
            if (to === undefined) return yield* refuse(current.status, "SENT")
            if (current.lines.length === 0 || current.total_minor <= 0) {
              return yield* new Unprocessable({
                errorCode: "invoice_total_not_positive",
                reason: "An invoice is issued with at least one line and a total above zero"
              })
            }
            const rate = input.exchange_rate_ron ?? current.exchange_rate_ron
            if (current.currency !== "RON" && rate === null) {
              return yield* ValidationFailed.field("exchange_rate_ron", `is required to issue an invoice in ${current.currency}`)
            }
            const issueDate = input.issue_date ?? current.issue_date ?? (yield* today(tenant))
            const dueDate = input.due_date ?? current.due_date ?? issueDate
            yield* datesInOrder(issueDate, dueDate)
            const at = yield* now
            const next: InvoiceRecord = {
              ...current,
              status: to,
              series: input.series,
              number: formatInvoiceNumber(input.series, yield* invoices.nextNumber(tenant, input.series)),
              issue_date: issueDate,
              due_date: dueDate,
              exchange_rate_ron: current.currency === "RON" ? null : rate,
              issued_at: at,
              updated_at: at
            }
            yield* invoices.update(tenant, next)
            return presentInvoice(next)
          }))
        }),
        void: Effect.fn("Invoices.void")(function*(tenant, id) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* find(tenant, id, true)
            const to = invoiceLifecycle.target(current.status, "void")
            if (to === undefined) return yield* refuse(current.status, "VOID")
            if (current.paid_minor > 0 || current.credited_minor > 0) {
              return yield* new Conflict({ reason: "An invoice with money paid or credited against it cannot be voided" })
            }
            const at = yield* now
            const next: InvoiceRecord = { ...current, status: to, voided_at: at, updated_at: at }
            yield* invoices.update(tenant, next)
            return presentInvoice(next)
          }))
        }),
        recordPayment,
        markPaid: Effect.fn("Invoices.markPaid")(function*(tenant, id, input) {
          const paymentDate = input.payment_date ?? (yield* today(tenant))
          // The balance is read under the invoice's lock, so a payment arriving meanwhile cannot make it overpaid.
          return yield* tx.withTransaction(Effect.gen(function*() {
            const invoice = yield* locked(tenant, id)
            yield* acceptingMoney(invoice)
            const { remaining_minor } = balanceOf(invoice)
            if (remaining_minor === 0) {
              return yield* new Unprocessable({ errorCode: "invoice_has_no_balance", reason: "Nothing remains to be paid on this invoice" })
            }
            return yield* recordPayment(tenant, id, {
              amount: formatMinor(remaining_minor, invoice.currency),
              payment_date: paymentDate,
              method: input.method ?? "OTHER",
              reference: input.reference ?? "",
              source: "mark_paid"
            })
          }))
        }),
        listPayments: (tenant, id) =>
          Effect.flatMap(find(tenant, id), (invoice) =>
            Effect.map(payments.listPayments(tenant, invoice.id), (rows) => rows.map((p) => presentPayment(p, invoice.currency)))),
        reversePayment: Effect.fn("Invoices.reversePayment")(function*(tenant, id, paymentId, input) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const invoice = yield* locked(tenant, id)
            const payment = yield* findPayment(tenant, invoice.id, paymentId)
            if (payment.reversal_id !== null) return yield* new Conflict({ reason: "This payment is already reversed" })
            if (payment.amount_minor > invoice.paid_minor) {
              return yield* new Conflict({ reason: "Refunds already returned part of this money; the payment cannot be reversed" })
            }
            const at = yield* now
            const reversal: ReversalRecord = {
              id: yield* newId(ids, ReversalId),
              invoice_id: invoice.id,
              reverses_payment_id: payment.id,
              amount_minor: payment.amount_minor,
              reason: input.reason ?? null,
              reversed_at: at
            }
            const next = withBalance(invoice, { paid_minor: invoice.paid_minor - payment.amount_minor }, at)
            yield* payments.insertReversal(tenant, reversal)
            yield* payments.updatePayment(tenant, { ...payment, reversal_id: reversal.id })
            yield* invoices.update(tenant, next).pipe(Effect.orDie)
            yield* outbox.publish(tenant, reversalEvent(next, reversal))
            return presentReversal(reversal, invoice.currency)
          }))
        }),
        refund: Effect.fn("Invoices.refund")(function*(tenant, id, input) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const invoice = yield* locked(tenant, id)
            yield* acceptingMoney(invoice)
            const amount = yield* amountIn(input.amount, invoice.currency)
            const { refund_due_minor } = balanceOf(invoice)
            if (amount > refund_due_minor) {
              return yield* new Unprocessable({
                errorCode: "refund_exceeds_refund_due",
                reason: `A refund returns at most what was paid beyond the net total (refund_due: ${refund_due_minor} minor units)`
              })
            }
            const at = yield* now
            const refund: RefundRecord = {
              id: yield* newId(ids, RefundId),
              invoice_id: invoice.id,
              amount_minor: amount,
              refund_date: input.refund_date,
              method: input.method,
              reference: input.reference ?? "",
              created_at: at
            }
            // Refunds emit none of the payment events (spec), and leave the status as it is: only overpaid money goes back.
            yield* payments.insertRefund(tenant, refund)
            yield* invoices.update(tenant, withBalance(invoice, { paid_minor: invoice.paid_minor - amount }, at)).pipe(Effect.orDie)
            return presentRefund(refund, invoice.currency)
          }))
        }),
        listRefunds: (tenant, id) =>
          Effect.flatMap(find(tenant, id), (invoice) =>
            Effect.map(payments.listRefunds(tenant, invoice.id), (rows) => rows.map((r) => presentRefund(r, invoice.currency))))
      })
    })
  )
}
