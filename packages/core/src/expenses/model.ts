import { Schema, Struct } from "effect"
import { LocationId } from "../locations/model.ts"
import { Filters } from "../shared/filters.ts"
import { CurrencyCode, DecimalAmount, IsoDate, IsoDateTime, isMaxChars, NonBlankString, Uuid } from "../shared/schemas.ts"

/** Expense categories (decided: docs/decisions.md). */
export const ExpenseCategory = Schema.Literals([
  "fuel",
  "tolls",
  "parking",
  "vehicle_maintenance",
  "travel",
  "meals",
  "office_supplies",
  "utilities",
  "rent",
  "software",
  "professional_services",
  "marketing",
  "insurance",
  "taxes_fees",
  "other"
])
export type ExpenseCategory = typeof ExpenseCategory.Type

/** Expense statuses; the moves between them are `expenseTransitions` in rules.ts. */
export const ExpenseStatus = Schema.Literals(["draft", "submitted", "approved", "rejected", "paid"])
export type ExpenseStatus = typeof ExpenseStatus.Type

export const ExpenseId = Uuid.pipe(Schema.brand("ExpenseId"))
export type ExpenseId = typeof ExpenseId.Type

export const Expense = Schema.Struct({
  id: ExpenseId,
  description: NonBlankString(500),
  category: ExpenseCategory,
  status: ExpenseStatus,
  amount: DecimalAmount,
  currency: CurrencyCode,
  expense_date: IsoDate,
  location_id: Schema.NullOr(LocationId),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "Expense" })
export type Expense = typeof Expense.Type

/** The longest external reference an expense is matched by. */
export const MAX_EXTERNAL_REF_CHARS = 100

/**
 * An expense with the external reference an import matches it by (unique in
 * an organization environment): stored with the expense, not part of the
 * expense resource.
 */
export const ReferencedExpense = Expense.mapFields(Struct.assign({
  external_ref: Schema.NullOr(Schema.String.check(isMaxChars(MAX_EXTERNAL_REF_CHARS)))
}))
export type ReferencedExpense = typeof ReferencedExpense.Type

/** What a caller may set: every field but the id and the timestamps. */
const Editable = Expense.mapFields(
  Struct.pick(["description", "category", "amount", "currency", "expense_date", "status", "location_id"])
)

/**
 * The status and location are optional (draft, no location). A new expense may
 * only start as a draft or already submitted: approval, rejection and payment
 * are moves of an existing one, so `status` is narrowed here.
 */
export const ExpenseCreate = Editable.mapFields(Struct.assign({ status: Schema.Literals(["draft", "submitted"]) }))
  .mapFields(Struct.mapPick(["status", "location_id"], Schema.optionalKey))
  .annotate({ identifier: "ExpenseCreate" })
export type ExpenseCreate = typeof ExpenseCreate.Type

export const ExpenseUpdate = Editable.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "ExpenseUpdate" })
export type ExpenseUpdate = typeof ExpenseUpdate.Type

export const ExpenseFilter = Schema.Struct({
  status: Schema.optionalKey(ExpenseStatus),
  category: Schema.optionalKey(ExpenseCategory),
  currency: Schema.optionalKey(CurrencyCode),
  location_id: Schema.optionalKey(Uuid),
  date_from: Schema.optionalKey(IsoDate.annotate({ description: "expense_date on or after" }).pipe(Filters.from("expense_date"))),
  date_to: Schema.optionalKey(IsoDate.annotate({ description: "expense_date on or before" }).pipe(Filters.to("expense_date")))
})
export type ExpenseFilter = typeof ExpenseFilter.Type
