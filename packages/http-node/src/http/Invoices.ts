import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BankTransactions, CreditNotes, Invoices } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const InvoicesHandlers = HttpApiBuilder.group(
  Api,
  "invoices",
  Effect.fn(function*(handlers) {
    const invoices = yield* Invoices.Invoices
    const credits = yield* CreditNotes.CreditNotes
    const bank = yield* BankTransactions.BankTransactions
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, filter, page) => invoices.list(tenant, filter, page)))
      .handle("get", ({ params }) => withTenant((tenant) => invoices.get(tenant, params.id)))
      .handle("create", ({ payload }) => withTenant((tenant) => invoices.create(tenant, payload)))
      .handle("update", ({ params, payload }) => withTenant((tenant) => invoices.update(tenant, params.id, payload)))
      .handle("issue", ({ params, payload }) => withTenant((tenant) => invoices.issue(tenant, params.id, payload)))
      .handle("void", ({ params }) => withTenant((tenant) => invoices.void(tenant, params.id)))
      .handle("listPayments", ({ params }) => withTenant((tenant) => invoices.listPayments(tenant, params.id)))
      .handle("recordPayment", ({ params, payload }) =>
        withTenant((tenant) => invoices.recordPayment(tenant, params.id, { ...payload, source: "api" })))
      .handle("markPaid", ({ params, payload }) => withTenant((tenant) => invoices.markPaid(tenant, params.id, payload ?? {})))
      .handle("reversePayment", ({ params, payload }) =>
        withTenant((tenant) => invoices.reversePayment(tenant, params.id, params.paymentId, payload ?? {})))
      .handle("listRefunds", ({ params }) => withTenant((tenant) => invoices.listRefunds(tenant, params.id)))
      .handle("refund", ({ params, payload }) => withTenant((tenant) => invoices.refund(tenant, params.id, payload)))
      .handle("issueCreditNote", ({ params, payload }) => withTenant((tenant) => credits.issue(tenant, params.id, payload)))
      .handle("listCreditNotes", ({ query }) => listForTenant(query, (tenant, filter, page) => credits.list(tenant, filter, page)))
      .handle("getCreditNote", ({ params }) => withTenant((tenant) => credits.get(tenant, params.creditNoteId)))
      .handle("cancelCreditNote", ({ params }) => withTenant((tenant) => credits.cancel(tenant, params.creditNoteId)))
      .handle("importBankTransactions", ({ payload }) => withTenant((tenant) => bank.import(tenant, payload)))
      .handle("listBankTransactions", ({ query }) => listForTenant(query, (tenant, filter, page) => bank.list(tenant, filter, page)))
      .handle("getBankTransaction", ({ params }) => withTenant((tenant) => bank.get(tenant, params.bankTransactionId)))
      .handle("matchBankTransaction", ({ params, payload }) =>
        withTenant((tenant) => bank.match(tenant, params.bankTransactionId, payload.invoice_id)))
  })
)
