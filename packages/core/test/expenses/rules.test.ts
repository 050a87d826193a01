import { describe, expect, it } from "vitest"
import { canTransition, expenseTransitions, isEditable } from "../../src/expenses/rules.ts"
import type { ExpenseStatus } from "../../src/expenses/model.ts"

const statuses: ReadonlyArray<ExpenseStatus> = ["draft", "submitted", "approved", "rejected", "paid"]
const allowed = new Set([
  "draft>submitted",
  "submitted>approved",
  "submitted>rejected",
  "submitted>draft",
  "rejected>draft",
  "rejected>submitted",
  "approved>paid"
])

describe("expense transitions", () => {
  for (const from of statuses) {
    for (const to of statuses) {
      const expected = from === to || allowed.has(`${from}>${to}`)
      it(`${from} → ${to} is ${expected ? "allowed" : "refused"}`, () => {
        expect(canTransition(from, to)).toBe(expected)
      })
    }
  }

  it("the table has no move outside the decided set", () => {
    const moves = Object.entries(expenseTransitions).flatMap(([from, tos]) => tos.map((to) => `${from}>${to}`))
    expect(new Set(moves)).toEqual(allowed)
  })

  it("only draft and rejected expenses change their fields", () => {
    expect(statuses.filter(isEditable)).toEqual(["draft", "rejected"])
  })
})
