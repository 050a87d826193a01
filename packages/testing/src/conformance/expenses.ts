import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { ExpenseRepo } from "@opsplatform/core/expenses/ExpenseRepo"
import { type Expense, ExpenseId } from "@opsplatform/core/expenses/model"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import { freshOrganization, timestamps } from "./support.ts"

const expense = (id: string, at: string, overrides: Partial<Expense> = {}): Expense => ({
  id: ExpenseId.make(id),
  description: "Diesel",
  category: "fuel",
  status: "draft",
  amount: "120.50",
  currency: "RON",
  expense_date: "2026-03-01",
  location_id: null,
  created_at: at,
  updated_at: at,
  ...overrides
})

/** The ExpenseRepo contract. */
export const expenseRepoConformance = (name: string, storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>) =>
  describe(`ExpenseRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("keeps amounts as exact two-decimal strings and dates as dates", () =>
        Effect.gen(function*() {
          const repo = yield* ExpenseRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const e = expense(yield* ids.uuid, t0!, { amount: "999999999999.99", expense_date: "2024-02-29" })
          yield* repo.insert(org.live, e)
          assert.deepStrictEqual(yield* repo.find(org.live, e.id), Option.some(e))
          const changed = { ...e, amount: "0.10", status: "submitted" as const, updated_at: t1! }
          yield* repo.update(org.live, changed)
          assert.deepStrictEqual(yield* repo.find(org.live, e.id), Option.some(changed))
          assert.isTrue(Option.isNone(yield* repo.find(org.sandbox, e.id)))
        }))

      it.effect("writes batches with their external references, unique in a tenant and never part of the expense read back", () =>
        Effect.gen(function*() {
          const repo = yield* ExpenseRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const at = timestamps(3)
          const rows = [
            { ...expense(yield* ids.uuid, at[0]!), external_ref: "F-1" },
            { ...expense(yield* ids.uuid, at[1]!), external_ref: null },
            { ...expense(yield* ids.uuid, at[2]!, { description: "Toll" }), external_ref: "F-2" }
          ]
          yield* repo.insertAll(org.live, rows)
          const { external_ref: _, ...plain } = rows[0]!
          assert.deepStrictEqual(yield* repo.find(org.live, rows[0]!.id), Option.some(plain))
          assert.deepStrictEqual((yield* repo.findByExternalRefs(org.live, ["F-2", "F-9"])).map((e) => [e.id, e.external_ref]), [[rows[2]!.id, "F-2"]])
          const sorted = [...rows].sort((a, b) => a.id.localeCompare(b.id))
          assert.deepStrictEqual(yield* repo.lockAll(org.live, rows.map((r) => r.id)), sorted)
          // An update of the expense keeps its reference.
          yield* repo.update(org.live, { ...plain, amount: "1.00" })
          assert.deepStrictEqual((yield* repo.findByExternalRefs(org.live, ["F-1"])).map((e) => [e.amount, e.external_ref]), [["1.00", "F-1"]])
          const taken = yield* Effect.flip(repo.insertAll(org.live, [{ ...expense(yield* ids.uuid, at[0]!), external_ref: "F-1" }]))
          assert.strictEqual(taken.reason, "Another expense already has this external reference")
          // Another tenant neither sees nor removes them; the reference is free there.
          assert.deepStrictEqual(yield* repo.findByExternalRefs(org.sandbox, ["F-1"]), [])
          assert.deepStrictEqual(yield* repo.lockAll(org.sandbox, rows.map((r) => r.id)), [])
          yield* repo.removeAll(org.sandbox, rows.map((r) => r.id))
          yield* repo.insertAll(org.sandbox, [{ ...expense(yield* ids.uuid, at[0]!), external_ref: "F-1" }])
          yield* repo.removeAll(org.live, [rows[0]!.id, rows[2]!.id])
          assert.deepStrictEqual((yield* repo.lockAll(org.live, rows.map((r) => r.id))).map((e) => e.id), [rows[1]!.id])
          assert.deepStrictEqual(yield* repo.findByExternalRefs(org.live, ["F-1", "F-2"]), [])
        }))

      it.effect("filters by status, category, currency and an inclusive date range", () =>
        Effect.gen(function*() {
          const repo = yield* ExpenseRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const at = timestamps(4)
          const rows = [
            expense(yield* ids.uuid, at[0]!, { expense_date: "2026-01-31" }),
            expense(yield* ids.uuid, at[1]!, { expense_date: "2026-02-01", category: "tolls" }),
            expense(yield* ids.uuid, at[2]!, { expense_date: "2026-02-28", currency: "EUR", status: "submitted" }),
            expense(yield* ids.uuid, at[3]!, { expense_date: "2026-03-01" })
          ]
          for (const r of rows) yield* repo.insert(org.live, r)
          const page = yield* pageRequest({})
          const idsOf = (p: { items: ReadonlyArray<Expense> }) => p.items.map((e) => e.id)
          assert.deepStrictEqual(
            idsOf(yield* repo.list(org.live, { date_from: "2026-02-01", date_to: "2026-02-28" }, page)),
            [rows[2]!.id, rows[1]!.id]
          )
          assert.deepStrictEqual(idsOf(yield* repo.list(org.live, { category: "tolls" }, page)), [rows[1]!.id])
          assert.deepStrictEqual(idsOf(yield* repo.list(org.live, { currency: "EUR" }, page)), [rows[2]!.id])
          assert.deepStrictEqual(idsOf(yield* repo.list(org.live, { status: "submitted" }, page)), [rows[2]!.id])
          assert.strictEqual((yield* repo.list(org.live, {}, page)).meta.total, 4)
          assert.strictEqual((yield* repo.list(org.sandbox, {}, page)).meta.total, 0)
        }))
    })
  })
