import { describe, expect, it } from "vitest"
import { changedKeys } from "../../src/shared/changes.ts"

describe("changedKeys", () => {
  it("names the fields whose stored values differ, in the record's order, leaving out the ignored ones", () => {
    const before = { id: "1", plate: "B123ABC", make: null as string | null, capacity_kg: 1200, updated_at: "t0" }
    expect(changedKeys(before, { ...before })).toEqual([])
    expect(changedKeys(before, { ...before, capacity_kg: 1200.0, make: null })).toEqual([])
    expect(changedKeys(before, { ...before, make: "Ford", capacity_kg: 900, updated_at: "t1" }, ["updated_at"])).toEqual([
      "make",
      "capacity_kg"
    ])
  })

  it("compares nested values by content", () => {
    const before = { parties: [{ name: "A", role: "reclamant" }] }
    expect(changedKeys(before, { parties: [{ name: "A", role: "reclamant" }] })).toEqual([])
    expect(changedKeys(before, { parties: [{ name: "A", role: "pârât" }] })).toEqual(["parties"])
  })
})
