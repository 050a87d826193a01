import { describe, expect, it } from "vitest"
import { known, pendingOf } from "../../src/sql/migrate.ts"

describe("pendingOf", () => {
  it("applies a migration numbered below the highest applied one (0013 on a database at 0014)", () => {
    const atFourteen = known.filter((m) => m !== "0013_imports" && m <= "0014_fiscal")
    expect(atFourteen).toContain("0014_fiscal")
    expect(pendingOf(atFourteen)).toEqual(["0013_imports", ...known.filter((m) => m > "0014_fiscal")])
  })

  it("lists every known migration, in order, for an empty database and none for an up-to-date one", () => {
    expect(pendingOf([])).toEqual([...known].sort())
    expect(pendingOf(known)).toEqual([])
  })
})
