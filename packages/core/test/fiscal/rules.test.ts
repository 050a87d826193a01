import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { FiscalStatus } from "../../src/contacts/model.ts"
import { FiscalChangeKind } from "../../src/events/catalog.ts"
import {
  eventDate,
  factKinds,
  fiscalChanges,
  openInvoicesSummary,
  orderChanges,
  ronMinor,
  sameStatus
} from "../../src/fiscal/rules.ts"

const off = { status: false, effective_date: null }
const base: FiscalStatus = {
  cui: "14399840",
  inactive: off,
  struck_off: off,
  insolvency: off,
  vat_registered: { status: true, effective_date: "2015-03-01" },
  cash_vat: off
}
const on = (effective_date: string | null = null) => ({ status: true, effective_date })
const offOn = (effective_date: string | null = null) => ({ status: false, effective_date })

describe("what changed between two statuses", () => {
  it("names every kind, in both directions where the spec has one", () => {
    const today = "2026-05-14"
    const cases: Array<[Partial<FiscalStatus>, Partial<FiscalStatus>, string]> = [
      [{}, { inactive: on("2026-05-10") }, "became_inactive"],
      [{ inactive: on("2026-01-10") }, { inactive: offOn("2026-05-12") }, "reactivated"],
      [{}, { struck_off: on("2026-05-11") }, "struck_off"],
      [{}, { insolvency: on("2026-05-09") }, "insolvency"],
      [{ vat_registered: offOn("2020-12-02") }, { vat_registered: on("2026-05-01") }, "vat_registered"],
      [{}, { vat_registered: offOn("2026-05-13") }, "vat_deregistered"],
      [{}, { cash_vat: on("2026-05-01") }, "cash_vat_on"],
      [{ cash_vat: on("2025-01-01") }, { cash_vat: offOn("2026-04-30") }, "cash_vat_off"]
    ]
    const seen = new Set<string>()
    for (const [before, after, kind] of cases) {
      const next = { ...base, ...after }
      const changes = fiscalChanges({ ...base, ...before }, next, today)
      const fact = factKinds.find(([, up, down]) => up === kind || down === kind)![0]
      expect(changes).toEqual([{ kind, effective_date: next[fact].effective_date }])
      seen.add(kind)
    }
    expect([...seen].sort()).toEqual([...FiscalChangeKind.literals].sort())
  })

  it("sends nothing when a struck-off or insolvent company leaves that state (the spec has no kind for it)", () => {
    expect(fiscalChanges({ ...base, struck_off: on("2026-01-01") }, base, "2026-05-14")).toEqual([])
    expect(fiscalChanges({ ...base, insolvency: on() }, base, "2026-05-14")).toEqual([])
    expect(sameStatus({ ...base, insolvency: on() }, base)).toBe(false)
  })

  it("leaves effective_date out when the authority publishes none, and dates the id with the check", () => {
    const changes = fiscalChanges(base, { ...base, insolvency: on(null) }, "2026-05-14")
    expect(changes).toEqual([{ kind: "insolvency" }])
    expect(Object.keys(changes[0]!)).toEqual(["kind"])
    expect(eventDate(changes[0]!, "2026-05-14")).toBe("2026-05-14")
    expect(eventDate({ kind: "struck_off", effective_date: "2026-05-02" }, "2026-05-14")).toBe("2026-05-02")
  })

  it("orders several changes by date, undated ones at the check date, ties in the catalog's order", () => {
    const changes = fiscalChanges(base, {
      ...base,
      inactive: on("2026-05-10"),
      vat_registered: offOn("2026-05-01"),
      cash_vat: on(null),
      insolvency: on("2026-05-10")
    }, "2026-05-14")
    expect(changes).toEqual([
      { kind: "vat_deregistered", effective_date: "2026-05-01" },
      { kind: "became_inactive", effective_date: "2026-05-10" },
      { kind: "insolvency", effective_date: "2026-05-10" },
      { kind: "cash_vat_on" }
    ])
  })

  it("property: the order is a total order that does not depend on the input order", () => {
    const change = fc.record({
      kind: fc.constantFrom(...FiscalChangeKind.literals),
      effective_date: fc.option(fc.constantFrom("2026-05-01", "2026-05-13", "2026-05-14", "2026-05-20"), { nil: undefined })
    }).map((c) => (c.effective_date === undefined ? { kind: c.kind } : { kind: c.kind, effective_date: c.effective_date }))
    // A check reports each kind at most once.
    fc.assert(fc.property(fc.uniqueArray(change, { maxLength: 8, selector: (c) => c.kind }), (changes) => {
      const sorted = orderChanges(changes, "2026-05-14")
      expect(orderChanges([...changes].reverse(), "2026-05-14")).toEqual(sorted)
      for (let i = 1; i < sorted.length; i++) {
        const a = sorted[i - 1]!.effective_date ?? "2026-05-14"
        const b = sorted[i]!.effective_date ?? "2026-05-14"
        expect(a <= b).toBe(true)
      }
    }))
  })

  it("property: no change without a flipped status, and one change per flipped fact that has a kind", () => {
    const fact = fc.record({ status: fc.boolean(), effective_date: fc.option(fc.constant("2026-05-01"), { nil: null }) })
    const status = fc.record({
      cui: fc.constant("14399840"),
      inactive: fact,
      struck_off: fact,
      insolvency: fact,
      vat_registered: fact,
      cash_vat: fact
    })
    fc.assert(fc.property(status, status, (a, b) => {
      const changes = fiscalChanges(a, b, "2026-05-14")
      const flipped = factKinds.filter(([f, , down]) => a[f].status !== b[f].status && (b[f].status || down !== undefined))
      expect(changes.length).toBe(flipped.length)
      expect(fiscalChanges(a, a, "2026-05-14")).toEqual([])
      expect(sameStatus(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b))
    }))
  })
})

describe("open invoices in RON", () => {
  it("adds RON balances as they are and converts others at their own rate, rounding each once half away from zero", () => {
    expect(ronMinor({ currency: "RON", remaining_minor: 125_000, exchange_rate_ron: null })).toBe(125_000)
    // 100.00 EUR × 4.9763 = 497.63 RON.
    expect(ronMinor({ currency: "EUR", remaining_minor: 10_000, exchange_rate_ron: "4.9763" })).toBe(49_763)
    // 0.01 EUR × 4.975 = 0.04975 → 0.05 (half away from zero).
    expect(ronMinor({ currency: "EUR", remaining_minor: 1, exchange_rate_ron: "4.975" })).toBe(5)
    // 0.01 EUR × 4.4999 = 0.044999 → 0.04; × 4.5 = 0.045 → 0.05.
    expect(ronMinor({ currency: "EUR", remaining_minor: 1, exchange_rate_ron: "4.4999" })).toBe(4)
    expect(ronMinor({ currency: "EUR", remaining_minor: 1, exchange_rate_ron: "4.5" })).toBe(5)
    // JPY has no minor unit: 1000 JPY × 0.030512 = 30.512 → 30.51.
    expect(ronMinor({ currency: "JPY", remaining_minor: 1000, exchange_rate_ron: "0.030512" })).toBe(3051)
    // KWD has three: 1.000 KWD × 15.123456 = 15.123456 → 15.12.
    expect(ronMinor({ currency: "KWD", remaining_minor: 1000, exchange_rate_ron: "15.123456" })).toBe(1512)
    expect(() => ronMinor({ currency: "EUR", remaining_minor: 1, exchange_rate_ron: null })).toThrow(RangeError)
  })

  it("counts the invoices and sums them as a decimal string", () => {
    expect(openInvoicesSummary([])).toEqual({ count: 0, balance_ron: "0.00" })
    expect(openInvoicesSummary([
      { currency: "RON", remaining_minor: 125_000, exchange_rate_ron: null },
      { currency: "EUR", remaining_minor: 10_000, exchange_rate_ron: "4.9763" }
    ])).toEqual({ count: 2, balance_ron: "1747.63" })
    // The largest invoice twice still formats exactly.
    expect(openInvoicesSummary([
      { currency: "RON", remaining_minor: 99_999_999_999_999, exchange_rate_ron: null },
      { currency: "RON", remaining_minor: 99_999_999_999_999, exchange_rate_ron: null }
    ]).balance_ron).toBe("1999999999999.98")
  })

  it("property: a foreign balance matches exact rational arithmetic rounded half away from zero", () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 99_999_999_999_999 }),
      fc.integer({ min: 1, max: 999_999_999_999 }),
      (minor, rateMicro) => {
        const rate = `${Math.floor(rateMicro / 1e6)}.${String(rateMicro % 1e6).padStart(6, "0")}`
        const exact = BigInt(minor) * BigInt(rateMicro) * 100n
        const denominator = 100n * 1_000_000n
        const q = exact / denominator
        const r = exact % denominator
        const expected = r * 2n >= denominator ? q + 1n : q
        const got = (() => {
          try {
            return BigInt(ronMinor({ currency: "EUR", remaining_minor: minor, exchange_rate_ron: rate }))
          } catch {
            return undefined
          }
        })()
        // Beyond the safe-integer range the conversion refuses instead of losing precision.
        if (expected > BigInt(Number.MAX_SAFE_INTEGER)) expect(got).toBeUndefined()
        else expect(got).toBe(expected)
      }
    ))
  })
})
