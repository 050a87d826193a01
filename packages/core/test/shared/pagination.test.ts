import { Effect, Exit } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  decodeCursor,
  encodeCursor,
  MAX_PER_PAGE,
  pageFromArray,
  pageRequest
} from "../../src/shared/pagination.ts"

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runSyncExit(e)
const uuid = fc.uuid().map((u) => u.toLowerCase())

describe("pageRequest", () => {
  it("defaults to page 1 of 25", () => {
    expect(Effect.runSync(pageRequest({}))).toEqual({ page: 1, perPage: 25, after: undefined })
  })

  it.each([
    [{ perPage: 0 }, "perPage"],
    [{ perPage: MAX_PER_PAGE + 1 }, "perPage"],
    [{ perPage: 2.5 }, "perPage"],
    [{ page: 0 }, "page"],
    [{ cursor: "not-a-cursor!" }, "cursor"],
    [{ cursor: encodeCursor({ createdAt: "2026-01-01T00:00:00.000Z", id: "00000000-0000-4000-8000-000000000001" }, 2), page: 2 }, "cursor"]
  ])("refuses %j, naming %s", (input, field) => {
    expect(Exit.isFailure(run(pageRequest(input)))).toBe(true)
    const error = Effect.runSync(Effect.flip(pageRequest(input)))
    expect(error._tag).toBe("ValidationFailed")
    expect(error.details.map((d) => d.field)).toContain(field)
  })

  it("accepts the limits exactly", () => {
    expect(Effect.runSync(pageRequest({ perPage: 1 })).perPage).toBe(1)
    expect(Effect.runSync(pageRequest({ perPage: MAX_PER_PAGE })).perPage).toBe(MAX_PER_PAGE)
  })
})

describe("cursors", () => {
  it("round-trip their key and page, and are opaque URL-safe text", () => {
    fc.assert(fc.property(fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4102444800000) }), uuid, fc.integer({ min: 1, max: 10_000 }), (date, id, page) => {
      const cursor = encodeCursor({ createdAt: date.toISOString(), id }, page)
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
      expect(decodeCursor(cursor)).toEqual({ key: { createdAt: date.toISOString(), id }, page })
    }))
  })

  it("reject tampered or foreign values", () => {
    expect(decodeCursor("")).toBeUndefined()
    expect(decodeCursor(btoa(JSON.stringify({ t: "2026-01-01T00:00:00Z", i: "x'; DROP TABLE", p: 1 })))).toBeUndefined()
    expect(decodeCursor(btoa(JSON.stringify({ t: "yesterday", i: "00000000-0000-4000-8000-000000000001", p: 1 })))).toBeUndefined()
  })
})

describe("pageFromArray", () => {
  const rows = fc.uniqueArray(
    fc.record({ id: uuid, created_at: fc.integer({ min: 0, max: 5 }).map((s) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString()) }),
    { selector: (r) => r.id, maxLength: 40 }
  )
  const keyOf = (r: { id: string; created_at: string }) => ({ createdAt: r.created_at, id: r.id })

  it("walks every row exactly once, newest first, whether by offset or by cursor", () => {
    fc.assert(fc.property(rows, fc.integer({ min: 1, max: 7 }), (all, perPage) => {
      const expected = [...all].sort((a, b) =>
        a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1
      ).map((r) => r.id)
      const byCursor: Array<string> = []
      let request = Effect.runSync(pageRequest({ perPage }))
      for (;;) {
        const page = pageFromArray(request, all, keyOf)
        byCursor.push(...page.items.map((r) => r.id))
        expect(page.meta.total).toBe(all.length)
        expect(page.meta.totalPages).toBe(Math.ceil(all.length / perPage))
        if (page.meta.nextCursor === null) break
        request = Effect.runSync(pageRequest({ perPage, cursor: page.meta.nextCursor }))
      }
      expect(byCursor).toEqual(expected)
      const byOffset: Array<string> = []
      for (let p = 1; p <= Math.max(1, Math.ceil(all.length / perPage)); p++) {
        byOffset.push(...pageFromArray(Effect.runSync(pageRequest({ perPage, page: p })), all, keyOf).items.map((r) => r.id))
      }
      expect(byOffset).toEqual(expected)
    }))
  })
})
