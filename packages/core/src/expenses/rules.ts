import { transitionTable } from "../shared/transitions.ts"
import { ExpenseStatus } from "./model.ts"

/**
 * The lifecycle of an expense. A PATCH names the status it wants, so each
 * action is named by the status it leads to. Approved and paid expenses keep
 * their amounts: only the status moves on.
 */
export const expenseLifecycle = transitionTable(ExpenseStatus.literals, {
  submitted: { from: ["draft", "rejected"], to: "submitted" },
  approved: { from: ["submitted"], to: "approved" },
  rejected: { from: ["submitted"], to: "rejected" },
  draft: { from: ["submitted", "rejected"], to: "draft" },
  paid: { from: ["approved"], to: "paid" }
})

/** Where an expense may go from each status. */
export const expenseTransitions = expenseLifecycle.moves

/** Staying in the same status is not a transition, so it is always allowed (a PATCH that repeats it). */
export const canTransition = (from: ExpenseStatus, to: ExpenseStatus): boolean =>
  from === to || expenseLifecycle.can(from, to)

/** Statuses in which the amount, date and other fields may still change. */
export const isEditable = (status: ExpenseStatus): boolean => status === "draft" || status === "rejected"
