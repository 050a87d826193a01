import { Clock, Context, Effect, Layer } from "effect"
import { Conflict, type InvalidTransition, type NotFound, Unprocessable, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { formatMinor } from "../shared/money.ts"
import { isoFromMillis } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { Invoices } from "./Invoices.ts"
import {
  type BankTransaction,
  type BankTransactionFilter,
  BankTransactionId,
  type BankTransactionImport,
  type BankTransactionRecord
} from "./model.ts"
import { amountIn } from "./inputs.ts"
import { PaymentRepo } from "./PaymentRepo.ts"
import { presentBankTransaction } from "./present.ts"

/**
 * Incoming bank lines and their matching to invoices. A line matched to an
 * invoice records its money through `Invoices.recordPayment` with source
 * `bank_match` (spec: a bank line matched through the API reports
 * bank_match), in the same transaction that marks the line matched.
 */
export class BankTransactions extends Context.Service<BankTransactions, {
  readonly import: (tenant: Tenant, input: BankTransactionImport) => Effect.Effect<ReadonlyArray<BankTransaction>, ValidationFailed>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<BankTransaction, NotFound>
  readonly list: (tenant: Tenant, filter: BankTransactionFilter, page: PageRequest) => Effect.Effect<Page<BankTransaction>>
  readonly match: (
    tenant: Tenant,
    id: string,
    invoiceId: string
  ) => Effect.Effect<BankTransaction, NotFound | Conflict | InvalidTransition | Unprocessable | ValidationFailed>
}>()("@opsplatform/core/invoices/BankTransactions") {
  static readonly layer: Layer.Layer<BankTransactions, never, PaymentRepo | Invoices | Ids | Transactor> = Layer.effect(
    BankTransactions,
    Effect.gen(function*() {
      const repo = yield* PaymentRepo
      const invoices = yield* Invoices
      const ids = yield* Ids
      const tx = yield* Transactor
      const find = (tenant: Tenant, id: string, forUpdate = false) =>
        findOr404("bank transaction", id, (id) => repo.findBankTransaction(tenant, id, { forUpdate }))

      return BankTransactions.of({
        import: Effect.fn("BankTransactions.import")(function*(tenant, input) {
          const at = isoFromMillis(yield* Clock.currentTimeMillis)
          const lines: Array<BankTransactionRecord> = []
          for (const [i, line] of input.lines.entries()) {
            const amount = yield* amountIn(line.amount, line.currency, `lines.${i}.amount`)
            lines.push({
              id: yield* newId(ids, BankTransactionId),
              booking_date: line.booking_date,
              amount_minor: amount,
              currency: line.currency,
              description: line.description ?? "",
              reference: line.reference ?? "",
              counterparty_name: line.counterparty_name ?? null,
              counterparty_iban: line.counterparty_iban ?? null,
              matched_invoice_id: null,
              matched_payment_id: null,
              created_at: at
            })
          }
          yield* tx.withTransaction(repo.insertBankTransactions(tenant, lines))
          return lines.map(presentBankTransaction)
        }),
        get: (tenant, id) => Effect.map(find(tenant, id), presentBankTransaction),
        list: (tenant, filter, page) =>
          Effect.map(repo.listBankTransactions(tenant, filter, page), (found) => ({
            items: found.items.map(presentBankTransaction),
            meta: found.meta
          })),
        match: Effect.fn("BankTransactions.match")(function*(tenant, id, invoiceId) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const line = yield* find(tenant, id, true)
            if (line.matched_payment_id !== null) {
              return yield* new Conflict({ reason: "This bank transaction is already matched to an invoice" })
            }
            const invoice = yield* invoices.get(tenant, invoiceId)
            if (invoice.currency !== line.currency) {
              return yield* new Unprocessable({
                errorCode: "currency_mismatch",
                reason: `The bank transaction is in ${line.currency}; the invoice is in ${invoice.currency}`
              })
            }
            const payment = yield* invoices.recordPayment(tenant, invoice.id, {
              amount: formatMinor(line.amount_minor, line.currency),
              payment_date: line.booking_date,
              method: "BANK_TRANSFER",
              reference: line.reference,
              source: "bank_match"
            })
            const matched: BankTransactionRecord = { ...line, matched_invoice_id: invoice.id, matched_payment_id: payment.id }
            yield* repo.updateBankTransaction(tenant, matched)
            return presentBankTransaction(matched)
          }))
        })
      })
    })
  )
}
