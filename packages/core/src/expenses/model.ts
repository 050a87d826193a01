import { Schema } from "effect"
import { CurrencyCode, DecimalAmount, IsoDate, IsoDateTime, NonBlankString, Uuid } from "../shared/schemas.ts"

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

export const Expense = Schema.Struct({
  id: Schema.String,
  description: Schema.String,
  category: ExpenseCategory,
  status: ExpenseStatus,
  amount: Schema.String.annotate({ description: "Decimal string with exactly two decimals", examples: ["12.50"] }),
  currency: Schema.String,
  expense_date: Schema.String.annotate({ format: "date" }),
  location_id: Schema.NullOr(Schema.String),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "Expense" })
export type Expense = typeof Expense.Type

export const ExpenseCreate = Schema.Struct({
  description: NonBlankString(500),
  category: ExpenseCategory,
  amount: DecimalAmount,
  currency: CurrencyCode,
  expense_date: IsoDate,
  status: Schema.optionalKey(Schema.Literals(["draft", "submitted"])),
  location_id: Schema.optionalKey(Schema.NullOr(Uuid))
}).annotate({ identifier: "ExpenseCreate" })
export type ExpenseCreate = typeof ExpenseCreate.Type

export const ExpenseUpdate = Schema.Struct({
  description: Schema.optionalKey(NonBlankString(500)),
  category: Schema.optionalKey(ExpenseCategory),
  amount: Schema.optionalKey(DecimalAmount),
  currency: Schema.optionalKey(CurrencyCode),
  expense_date: Schema.optionalKey(IsoDate),
  status: Schema.optionalKey(ExpenseStatus),
  location_id: Schema.optionalKey(Schema.NullOr(Uuid))
}).annotate({ identifier: "ExpenseUpdate" })
export type ExpenseUpdate = typeof ExpenseUpdate.Type

export interface ExpenseFilter {
  readonly status?: ExpenseStatus | undefined
  readonly category?: ExpenseCategory | undefined
  readonly currency?: string | undefined
  readonly date_from?: string | undefined
  readonly date_to?: string | undefined
  readonly location_id?: string | undefined
}
