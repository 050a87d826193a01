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
  type InvoiceUpdate
} from "./model.ts"
import { PaymentRepo } from "./PaymentRepo.ts"
import { type InvoiceContext, type InvoiceMoney, invoiceMoney, pricedLines } from "./payments.ts"
import { presentInvoice } from "./present.ts"
import { formatInvoiceNumber, invoiceLifecycle, totalsOf } from "./rules.ts"

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
} & InvoiceMoney>()("@opsplatform/core/invoices/Invoices") {
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
      const context: InvoiceContext = {
        invoices,
        payments,
        outbox,
        ids,
        tx,
        today: (tenant) => organizationToday(tenancy, tenant.organizationId),
        locked: (tenant, id) => find(tenant, id, true)
      }
      const now = Effect.map(Clock.currentTimeMillis, isoFromMillis)
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
          const found = yield* invoices.list(tenant, filter, yield* context.today(tenant), page)
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
            const issueDate = input.issue_date ?? current.issue_date ?? (yield* context.today(tenant))
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
        ...invoiceMoney(context, (tenant, id) => find(tenant, id))
      })
    })
  )
}
