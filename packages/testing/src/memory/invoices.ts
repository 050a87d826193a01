import { Effect, Layer, Option } from "effect"
import { invoiceConflicts, InvoiceRepo } from "@opsplatform/core/invoices/InvoiceRepo"
import { BankTransactionFilter, type BankTransactionRecord, CreditNoteFilter, type CreditNoteRecord, InvoiceFilter, type InvoiceRecord, type PaymentRecord, type RefundRecord, type ReversalRecord } from "@opsplatform/core/invoices/model"
import { paymentConflicts, PaymentRepo } from "@opsplatform/core/invoices/PaymentRepo"
import { Conflict } from "@opsplatform/core/shared/errors"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"

const byCreation = <A extends { readonly created_at: string; readonly id: string }>(a: A, b: A) =>
  a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1

/** The memory twin of `InvoiceRepo.layerSql`, with its unique numbers and gap-free series. */
export const InvoiceRepoMemory: Layer.Layer<InvoiceRepo, never, MemoryStore> = Layer.effect(
  InvoiceRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const invoices = memoryTenantTable<InvoiceRecord>(store, "invoices")
    const notes = memoryTenantTable<CreditNoteRecord>(store, "credit_notes")
    const series = store.table<number>("invoice_series")
    return InvoiceRepo.of({
      insert: (tenant, invoice) => Effect.sync(() => invoices.insert(tenant, invoice)),
      update: (tenant, invoice) =>
        invoice.number !== null &&
          invoices.filter(tenant, (o) => o.id !== invoice.id && o.number === invoice.number).length > 0
          ? Effect.fail(new Conflict({ reason: invoiceConflicts.invoices_number_unique }))
          : Effect.sync(() => void invoices.update(tenant, invoice)),
      find: (tenant, id) => Effect.sync(() => invoices.find(tenant, id)),
      list: (tenant, f, today, page) =>
        Effect.sync(() =>
          invoices.page(tenant, filterPredicates(InvoiceFilter, f, {
            overdue: (overdue) => (i: InvoiceRecord) =>
              ((i.status === "SENT" || i.status === "PARTIALLY_PAID") && i.due_date !== null && i.due_date < today) === overdue
          }), page)
        ),
      nextNumber: (tenant, name) =>
        Effect.sync(() => {
          const key = `${tenant.organizationId}/${tenant.environment}/${name}`
          const next = (series.get(key) ?? 0) + 1
          series.set(key, next)
          return next
        }),
      insertCreditNote: (tenant, note) =>
        notes.filter(tenant, (o) => o.number === note.number).length > 0
          ? Effect.fail(new Conflict({ reason: invoiceConflicts.credit_notes_number_unique }))
          : Effect.sync(() => notes.insert(tenant, note)),
      updateCreditNote: (tenant, note) => Effect.sync(() => void notes.update(tenant, note)),
      findCreditNote: (tenant, id) => Effect.sync(() => notes.find(tenant, id)),
      listCreditNotes: (tenant, f, page) =>
        Effect.sync(() =>
          notes.page(
            tenant,
            filterPredicates(CreditNoteFilter, f),
            page
          )
        )
    })
  })
)

/** The memory twin of `PaymentRepo.layerSql`: at most one reversal per payment. */
export const PaymentRepoMemory: Layer.Layer<PaymentRepo, never, MemoryStore> = Layer.effect(
  PaymentRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const payments = memoryTenantTable<PaymentRecord>(store, "invoice_payments")
    const reversals = memoryTenantTable<ReversalRecord & { readonly created_at: string }>(store, "invoice_payment_reversals")
    const refunds = memoryTenantTable<RefundRecord>(store, "invoice_refunds")
    const bank = memoryTenantTable<BankTransactionRecord>(store, "bank_transactions")
    return PaymentRepo.of({
      insertPayment: (tenant, p) => Effect.sync(() => payments.insert(tenant, p)),
      updatePayment: (tenant, p) => Effect.sync(() => void payments.update(tenant, p)),
      findPayment: (tenant, invoiceId, id) =>
        Effect.sync(() => Option.filter(payments.find(tenant, id), (p) => p.invoice_id === invoiceId)),
      listPayments: (tenant, invoiceId) => Effect.sync(() => payments.filter(tenant, (p) => p.invoice_id === invoiceId).sort(byCreation)),
      insertReversal: (tenant, r) =>
        reversals.filter(tenant, (o) => o.reverses_payment_id === r.reverses_payment_id).length > 0
          ? Effect.fail(new Conflict({ reason: paymentConflicts.invoice_payment_reversals_payment_unique }))
          : Effect.sync(() => reversals.insert(tenant, { ...r, created_at: r.reversed_at })),
      listReversals: (tenant, invoiceId) =>
        Effect.sync(() =>
          reversals.filter(tenant, (r) => r.invoice_id === invoiceId).sort(byCreation).map(({ created_at: _, ...r }) => r)
        ),
      insertRefund: (tenant, r) => Effect.sync(() => refunds.insert(tenant, r)),
      listRefunds: (tenant, invoiceId) => Effect.sync(() => refunds.filter(tenant, (r) => r.invoice_id === invoiceId).sort(byCreation)),
      insertBankTransactions: (tenant, lines) => Effect.sync(() => lines.forEach((l) => bank.insert(tenant, l))),
      updateBankTransaction: (tenant, l) => Effect.sync(() => void bank.update(tenant, l)),
      findBankTransaction: (tenant, id) => Effect.sync(() => bank.find(tenant, id)),
      listBankTransactions: (tenant, f, page) =>
        Effect.sync(() => bank.page(tenant, filterPredicates(BankTransactionFilter, f), page))
    })
  })
)
