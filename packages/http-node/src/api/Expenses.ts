import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ExpenseModel, Schemas } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { Envelope, ListEnvelope, idParam, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The expense id") }

export class ExpensesApi extends HttpApiGroup.make("expenses")
  .add(
    HttpApiEndpoint.get("list", "/expenses", {
      query: {
        ...pageQuery,
        status: Schema.optionalKey(ExpenseModel.ExpenseStatus),
        category: Schema.optionalKey(ExpenseModel.ExpenseCategory),
        currency: Schema.optionalKey(Schemas.CurrencyCode),
        location_id: Schema.optionalKey(Schemas.Uuid),
        date_from: Schema.optionalKey(Schemas.IsoDate.annotate({ description: "expense_date on or after" })),
        date_to: Schema.optionalKey(Schemas.IsoDate.annotate({ description: "expense_date on or before" }))
      },
      success: ListEnvelope(ExpenseModel.Expense)
    }).pipe(scope("expenses:read")),
    HttpApiEndpoint.get("get", "/expenses/:id", {
      params: idParams,
      success: Envelope(ExpenseModel.Expense),
      error: NotFoundError
    }).pipe(scope("expenses:read")),
    HttpApiEndpoint.post("create", "/expenses", {
      payload: ExpenseModel.ExpenseCreate,
      success: Envelope(ExpenseModel.Expense).pipe(HttpApiSchema.status(201)),
      error: NotFoundError
    }).pipe(scope("expenses:write")),
    HttpApiEndpoint.patch("update", "/expenses/:id", {
      params: idParams,
      payload: ExpenseModel.ExpenseUpdate,
      success: Envelope(ExpenseModel.Expense),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("expenses:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Expenses",
    description: "Expenses with amounts as decimal strings and an approval flow: draft → submitted → approved → paid (or rejected)."
  }))
{}
