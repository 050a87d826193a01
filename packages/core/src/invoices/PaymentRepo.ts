import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Numeric, Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, type FindOptions, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import {
  BankTransactionFilter,
  BankTransactionRecord,
  PaymentRecord,
  RefundRecord,
  ReversalRecord
} from "./model.ts"

export const paymentConflicts = {
  invoice_payment_reversals_payment_unique: "This payment is already reversed"
}

const withAmount = { amount_minor: Numeric }

export const PaymentRow = PaymentRecord.mapFields(Struct.assign({ ...withAmount, created_at: Timestamp }))
export const ReversalRow = ReversalRecord.mapFields(Struct.assign({ ...withAmount, reversed_at: Timestamp }))
export const RefundRow = RefundRecord.mapFields(Struct.assign({ ...withAmount, created_at: Timestamp }))
export const BankTransactionRow = BankTransactionRecord.mapFields(Struct.assign({ ...withAmount, created_at: Timestamp }))

/**
 * Storage port for the money that moves against invoices: payments, their
 * reversals (at most one per payment, guaranteed by the store), refunds, and
 * the bank lines payments are matched from.
 */
export class PaymentRepo extends Context.Service<PaymentRepo, TenantScoped<{
  readonly insertPayment: (tenant: Tenant, payment: PaymentRecord) => Effect.Effect<void>
  readonly updatePayment: (tenant: Tenant, payment: PaymentRecord) => Effect.Effect<void>
  readonly findPayment: (tenant: Tenant, invoiceId: string, id: string) => Effect.Effect<Option.Option<PaymentRecord>>
  /** Oldest first. */
  readonly listPayments: (tenant: Tenant, invoiceId: string) => Effect.Effect<ReadonlyArray<PaymentRecord>>
  readonly insertReversal: (tenant: Tenant, reversal: ReversalRecord) => Effect.Effect<void, Conflict>
  readonly listReversals: (tenant: Tenant, invoiceId: string) => Effect.Effect<ReadonlyArray<ReversalRecord>>
  readonly insertRefund: (tenant: Tenant, refund: RefundRecord) => Effect.Effect<void>
  /** Oldest first. */
  readonly listRefunds: (tenant: Tenant, invoiceId: string) => Effect.Effect<ReadonlyArray<RefundRecord>>
  readonly insertBankTransactions: (tenant: Tenant, lines: ReadonlyArray<BankTransactionRecord>) => Effect.Effect<void>
  readonly updateBankTransaction: (tenant: Tenant, line: BankTransactionRecord) => Effect.Effect<void>
  readonly findBankTransaction: (tenant: Tenant, id: string, options?: FindOptions) => Effect.Effect<Option.Option<BankTransactionRecord>>
  readonly listBankTransactions: (
    tenant: Tenant,
    filter: BankTransactionFilter,
    page: PageRequest
  ) => Effect.Effect<Page<BankTransactionRecord>>
}>>()("@opsplatform/core/invoices/PaymentRepo") {
  static readonly layerSql: Layer.Layer<PaymentRepo, never, SqlClient.SqlClient> = Layer.effect(
    PaymentRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(paymentConflicts)
      const payments = tenantTable(sql, { name: "invoice_payments", row: PaymentRow })
      const reversals = tenantTable(sql, { name: "invoice_payment_reversals", row: ReversalRow })
      const refunds = tenantTable(sql, { name: "invoice_refunds", row: RefundRow })
      const bank = tenantTable(sql, { name: "bank_transactions", row: BankTransactionRow })
      const ofInvoice = (invoiceId: string) => [sql`invoice_id = ${invoiceId}`]
      return PaymentRepo.of({
        insertPayment: (tenant, p) => orDie(payments.insert(tenant, p)),
        updatePayment: (tenant, p) => orDie(payments.update(tenant, p)).pipe(Effect.asVoid),
        findPayment: (tenant, invoiceId, id) => payments.find(tenant, [...ofInvoice(invoiceId), sql`id = ${id}`]),
        listPayments: (tenant, invoiceId) => payments.findAll(tenant, ofInvoice(invoiceId), sql`created_at, id`),
        insertReversal: (tenant, r) => conflicts(reversals.insert(tenant, r)),
        listReversals: (tenant, invoiceId) => reversals.findAll(tenant, ofInvoice(invoiceId), sql`reversed_at, id`),
        insertRefund: (tenant, r) => orDie(refunds.insert(tenant, r)),
        listRefunds: (tenant, invoiceId) => refunds.findAll(tenant, ofInvoice(invoiceId), sql`created_at, id`),
        insertBankTransactions: (tenant, lines) => Effect.forEach(lines, (l) => orDie(bank.insert(tenant, l)), { discard: true }),
        updateBankTransaction: (tenant, l) => orDie(bank.update(tenant, l)).pipe(Effect.asVoid),
        findBankTransaction: (tenant, id, options) => bank.findById(tenant, id, options),
        listBankTransactions: (tenant, f, page) =>
          bank.page(tenant, filterConditions(sql, BankTransactionFilter, f), page)
      })
    })
  )
}
