import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ExpenseModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { Envelope, ListEnvelope, idParam, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The expense id") }

export class ExpensesApi extends HttpApiGroup.make("expenses")
  .add(
    HttpApiEndpoint.get("list", "/expenses", {
      query: { ...pageQuery, ...ExpenseModel.ExpenseFilter.fields },
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
