import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { InvoiceModel } from "@opsplatform/core"
import { ConflictError, NotFoundError, UnprocessableError } from "./errors.ts"
import { Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const invoiceParams = { id: idParam("The invoice id") }
const creditNoteParams = { creditNoteId: idParam("The credit note id") }
const bankParams = { bankTransactionId: idParam("The bank transaction id") }

/** Mark-paid may name when and how; an empty body records today, method OTHER. */
const MarkPaid = InvoiceModel.PaymentCreate.mapFields(({ method, payment_date, reference }) => ({
  payment_date: Schema.optionalKey(payment_date),
  method: Schema.optionalKey(method),
  reference
})).annotate({ identifier: "InvoiceMarkPaid" })

const Created = <S extends Schema.Top>(schema: S) => Envelope(schema).pipe(HttpApiSchema.status(201))

export class InvoicesApi extends HttpApiGroup.make("invoices")
  .add(
    HttpApiEndpoint.get("list", "/invoices", {
      query: { ...pageQuery, ...InvoiceModel.InvoiceFilter.fields },
      success: ListEnvelope(InvoiceModel.Invoice)
    }).pipe(scope("invoices:read")),
    HttpApiEndpoint.get("get", "/invoices/:id", {
      params: invoiceParams,
      success: Envelope(InvoiceModel.Invoice),
      error: NotFoundError
    }).pipe(scope("invoices:read")),
    HttpApiEndpoint.post("create", "/invoices", {
      payload: InvoiceModel.InvoiceCreate,
      success: Created(InvoiceModel.Invoice),
      error: NotFoundError
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.patch("update", "/invoices/:id", {
      params: invoiceParams,
      payload: InvoiceModel.InvoiceUpdate,
      success: Envelope(InvoiceModel.Invoice),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.post("issue", "/invoices/:id/issue", {
      params: invoiceParams,
      payload: InvoiceModel.InvoiceIssue,
      success: Envelope(InvoiceModel.Invoice),
      error: [NotFoundError, ConflictError, UnprocessableError]
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.post("void", "/invoices/:id/void", {
      params: invoiceParams,
      success: Envelope(InvoiceModel.Invoice),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.get("listPayments", "/invoices/:id/payments", {
      params: invoiceParams,
      success: Envelope(Schema.Array(InvoiceModel.Payment)),
      error: NotFoundError
    }).pipe(scope("invoices:read")),
    HttpApiEndpoint.post("recordPayment", "/invoices/:id/payments", {
      params: invoiceParams,
      payload: InvoiceModel.PaymentCreate,
      success: Created(InvoiceModel.Payment),
      error: [NotFoundError, ConflictError, UnprocessableError]
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.post("markPaid", "/invoices/:id/mark-paid", {
      params: invoiceParams,
      payload: [MarkPaid, Schema.Null],
      success: Created(InvoiceModel.Payment),
      error: [NotFoundError, ConflictError, UnprocessableError]
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.post("reversePayment", "/invoices/:id/payments/:paymentId/reverse", {
      params: { ...invoiceParams, paymentId: idParam("The payment id") },
      payload: [InvoiceModel.ReversalCreate, Schema.Null],
      success: Created(InvoiceModel.Reversal),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.get("listRefunds", "/invoices/:id/refunds", {
      params: invoiceParams,
      success: Envelope(Schema.Array(InvoiceModel.Refund)),
      error: NotFoundError
    }).pipe(scope("invoices:read")),
    HttpApiEndpoint.post("refund", "/invoices/:id/refunds", {
      params: invoiceParams,
      payload: InvoiceModel.RefundCreate,
      success: Created(InvoiceModel.Refund),
      error: [NotFoundError, ConflictError, UnprocessableError]
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.post("issueCreditNote", "/invoices/:id/credit-notes", {
      params: invoiceParams,
      payload: InvoiceModel.CreditNoteCreate,
      success: Created(InvoiceModel.CreditNote),
      error: [NotFoundError, ConflictError, UnprocessableError]
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.get("listCreditNotes", "/credit-notes", {
      query: { ...pageQuery, ...InvoiceModel.CreditNoteFilter.fields },
      success: ListEnvelope(InvoiceModel.CreditNote)
    }).pipe(scope("invoices:read")),
    HttpApiEndpoint.get("getCreditNote", "/credit-notes/:creditNoteId", {
      params: creditNoteParams,
      success: Envelope(InvoiceModel.CreditNote),
      error: NotFoundError
    }).pipe(scope("invoices:read")),
    HttpApiEndpoint.post("cancelCreditNote", "/credit-notes/:creditNoteId/cancel", {
      params: creditNoteParams,
      success: Envelope(InvoiceModel.CreditNote),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.post("importBankTransactions", "/bank-transactions", {
      payload: InvoiceModel.BankTransactionImport,
      success: Created(Schema.Array(InvoiceModel.BankTransaction))
    }).pipe(scope("invoices:write")),
    HttpApiEndpoint.get("listBankTransactions", "/bank-transactions", {
      query: { ...pageQuery, ...InvoiceModel.BankTransactionFilter.fields },
      success: ListEnvelope(InvoiceModel.BankTransaction)
    }).pipe(scope("invoices:read")),
    HttpApiEndpoint.get("getBankTransaction", "/bank-transactions/:bankTransactionId", {
      params: bankParams,
      success: Envelope(InvoiceModel.BankTransaction),
      error: NotFoundError
    }).pipe(scope("invoices:read")),
    HttpApiEndpoint.post("matchBankTransaction", "/bank-transactions/:bankTransactionId/match", {
      params: bankParams,
      payload: InvoiceModel.BankTransactionMatch,
      success: Envelope(InvoiceModel.BankTransaction),
      error: [NotFoundError, ConflictError, UnprocessableError]
    }).pipe(scope("invoices:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Invoices",
    description: "Invoices, their payments, reversals, refunds and credit notes, and bank transactions matched to them. " +
      "DRAFT → SENT (issue, numbered per series without gaps) → PARTIALLY_PAID / PAID / CREDITED from the balance; " +
      "VOID while nothing is paid or credited. Amounts are decimal strings in the currency's exponent."
  }))
{}
