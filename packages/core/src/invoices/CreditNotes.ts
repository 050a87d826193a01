import { Clock, Context, Effect, Layer } from "effect"
import { Outbox } from "../events/Outbox.ts"
import { type Conflict, InvalidTransition, type NotFound, Unprocessable, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { creditedEvent } from "./events.ts"
import { InvoiceRepo } from "./InvoiceRepo.ts"
import {
  type CreditNote,
  type CreditNoteCreate,
  type CreditNoteFilter,
  CreditNoteId,
  type CreditNoteRecord
} from "./model.ts"
import { amountIn, pricedLines } from "./inputs.ts"
import { presentCreditNote } from "./present.ts"
import { acceptsMoney, formatInvoiceNumber, totalsOf, withBalance } from "./rules.ts"

/**
 * Credit notes: documents that cancel part or all of an issued invoice's
 * debt. A credit note is not a payment (it never fires `invoice.paid`); each
 * one issued or cancelled changes the invoice's credited amount and publishes
 * `invoice.credited` in the same transaction. A credit note takes the next
 * number of its invoice's series.
 */
export class CreditNotes extends Context.Service<CreditNotes, {
  readonly issue: (
    tenant: Tenant,
    invoiceId: string,
    input: CreditNoteCreate
  ) => Effect.Effect<CreditNote, NotFound | ValidationFailed | InvalidTransition | Unprocessable | Conflict>
  readonly cancel: (tenant: Tenant, id: string) => Effect.Effect<CreditNote, NotFound | InvalidTransition>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<CreditNote, NotFound>
  readonly list: (tenant: Tenant, filter: CreditNoteFilter, page: PageRequest) => Effect.Effect<Page<CreditNote>>
}>()("@opsplatform/core/invoices/CreditNotes") {
  static readonly layer: Layer.Layer<CreditNotes, never, InvoiceRepo | Outbox | Ids | Transactor> = Layer.effect(
    CreditNotes,
    Effect.gen(function*() {
      const invoices = yield* InvoiceRepo
      const outbox = yield* Outbox
      const ids = yield* Ids
      const tx = yield* Transactor
      const now = Effect.map(Clock.currentTimeMillis, isoFromMillis)
      const lockedInvoice = (tenant: Tenant, id: string) =>
        findOr404("invoice", id, (id) => invoices.find(tenant, id, { forUpdate: true }))
      const find = (tenant: Tenant, id: string, forUpdate = false) =>
        findOr404("credit note", id, (id) => invoices.findCreditNote(tenant, id, { forUpdate }))

      return CreditNotes.of({
        issue: Effect.fn("CreditNotes.issue")(function*(tenant, invoiceId, input) {
          if ((input.amount === undefined) === (input.lines === undefined)) {
            return yield* ValidationFailed.field("amount", "send exactly one of amount or lines")
          }
          return yield* tx.withTransaction(Effect.gen(function*() {
            const invoice = yield* lockedInvoice(tenant, invoiceId)
            if (!acceptsMoney(invoice.status) || invoice.series === null) {
              return yield* new InvalidTransition({ resource: "invoice", from: invoice.status, to: "CREDITED" })
            }
            const lines = input.lines === undefined ? null : yield* pricedLines(input.lines, invoice.currency)
            const amount = lines === null ? yield* amountIn(input.amount!, invoice.currency) : totalsOf(lines).total_minor
            const creditable = invoice.total_minor - invoice.credited_minor
            if (amount <= 0 || amount > creditable) {
              return yield* new Unprocessable({
                errorCode: "credit_exceeds_invoice",
                reason: `A credit note reverses at most what is not yet credited (${creditable} minor units of ${invoice.currency})`
              })
            }
            const at = yield* now
            const note: CreditNoteRecord = {
              id: yield* newId(ids, CreditNoteId),
              invoice_id: invoice.id,
              number: formatInvoiceNumber(invoice.series, yield* invoices.nextNumber(tenant, invoice.series)),
              status: "issued",
              currency: invoice.currency,
              reason: input.reason.trim(),
              lines,
              amount_minor: amount,
              issued_at: at,
              cancelled_at: null,
              created_at: at,
              updated_at: at
            }
            const next = withBalance(invoice, { credited_minor: invoice.credited_minor + amount }, at)
            yield* invoices.insertCreditNote(tenant, note)
            yield* invoices.update(tenant, next)
            yield* outbox.publish(tenant, creditedEvent(next, note.id))
            return presentCreditNote(note)
          }))
        }),
        cancel: Effect.fn("CreditNotes.cancel")(function*(tenant, id) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const note = yield* find(tenant, id, true)
            if (note.status !== "issued") {
              return yield* new InvalidTransition({ resource: "credit note", from: note.status, to: "cancelled" })
            }
            const invoice = yield* lockedInvoice(tenant, note.invoice_id)
            const at = yield* now
            const cancelled: CreditNoteRecord = { ...note, status: "cancelled", cancelled_at: at, updated_at: at }
            const next = withBalance(invoice, { credited_minor: invoice.credited_minor - note.amount_minor }, at)
            yield* invoices.updateCreditNote(tenant, cancelled)
            yield* invoices.update(tenant, next).pipe(Effect.orDie)
            yield* outbox.publish(tenant, creditedEvent(next, note.id))
            return presentCreditNote(cancelled)
          }))
        }),
        get: (tenant, id) => Effect.map(find(tenant, id), presentCreditNote),
        list: (tenant, filter, page) =>
          Effect.map(invoices.listCreditNotes(tenant, filter, page), (found) => ({
            items: found.items.map(presentCreditNote),
            meta: found.meta
          }))
      })
    })
  )
}
