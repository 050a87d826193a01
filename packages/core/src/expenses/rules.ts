import type { ExpenseStatus } from "./model.ts"

/**
 * Where an expense may go from each status. Staying in the same status is not
 * a transition. Approved and paid expenses keep their amounts: only the status
 * moves on.
 */
export const expenseTransitions: Readonly<Record<ExpenseStatus, ReadonlyArray<ExpenseStatus>>> = {
  draft: ["submitted"],
  submitted: ["approved", "rejected", "draft"],
  rejected: ["draft", "submitted"],
  approved: ["paid"],
  paid: []
}

export const canTransition = (from: ExpenseStatus, to: ExpenseStatus): boolean =>
  from === to || expenseTransitions[from].includes(to)

/** Statuses in which the amount, date and other fields may still change. */
export const isEditable = (status: ExpenseStatus): boolean => status === "draft" || status === "rejected"
