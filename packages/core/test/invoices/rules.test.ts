import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { InvoiceRecord, InvoiceStatus } from "../../src/invoices/model.ts"
import {
  balanceOf,
  formatInvoiceNumber,
  invoiceLifecycle,
  invoiceStatus,
  lineAmounts,
  priceLines,
  totalsOf,
  withBalance
} from "../../src/invoices/rules.ts"

describe("line amounts: one rounding, half away from zero, per amount", () => {
  it("worked examples", () => {
    // 3 × 33.335 = 100.005 → 100.01; VAT 21 % of 100.01 = 21.0021 → 21.00.
    expect(lineAmounts({ description: "x", quantity: "3", unit_price: "33.335", vat_rate: 21 }, "RON")).toMatchObject({
      net_minor: 10_001,
      vat_minor: 2_100,
      total_minor: 12_101
    })
    // 0.5 × 0.01 = 0.005 → 0.01 (half away from zero, not to even); 9 % VAT of 0.01 = 0.0009 → 0.00.
    expect(lineAmounts({ description: "x", quantity: "0.5", unit_price: "0.01", vat_rate: 9 }, "RON")).toMatchObject({
      net_minor: 1,
      vat_minor: 0,
      total_minor: 1
    })
    // 2.5 × 10.05 = 25.125 → 25.13; 5.5 % of 25.13 = 1.38215 → 1.38.
    expect(lineAmounts({ description: "x", quantity: "2.5", unit_price: "10.05", vat_rate: 5.5 }, "RON")).toMatchObject({
      net_minor: 2_513,
      vat_minor: 138
    })
    // JPY has no minor unit: 3 × 333.5 = 1000.5 → 1001; 10 % = 100.1 → 100.
    expect(lineAmounts({ description: "x", quantity: "3", unit_price: "333.5", vat_rate: 10 }, "JPY")).toMatchObject({
      net_minor: 1_001,
      vat_minor: 100
    })
    // Beyond the largest amount (12 integer digits) a line has no amounts: the caller gets a 400, never an overflow.
    expect(
      lineAmounts({ description: "x", quantity: "999999999.999", unit_price: "999999999999.9999", vat_rate: 21 }, "RON")
    ).toBeUndefined()
    expect(lineAmounts({ description: "x", quantity: "1", unit_price: "999999999999.99", vat_rate: 0 }, "RON")?.total_minor)
      .toBe(99_999_999_999_999)
    expect(lineAmounts({ description: "x", quantity: "1", unit_price: "999999999999.99", vat_rate: 1 }, "RON")).toBeUndefined()
  })

  it("priceLines names the line, or the lines, beyond the largest amount", () => {
    const big = { description: "x", quantity: "1", unit_price: "600000000000", vat_rate: 0 }
    expect(priceLines([big], "RON")).toMatchObject({ lines: [{ total_minor: 60_000_000_000_000 }] })
    expect(priceLines([big, big], "RON")).toEqual({ field: "lines", issue: "the total exceeds 999999999999.99" })
    expect(priceLines([big, { ...big, quantity: "2" }], "RON", "lines")).toMatchObject({ field: "lines.1" })
  })

  const decimal = (maxWhole: number, scale: number) =>
    fc.tuple(fc.integer({ min: 0, max: maxWhole }), fc.integer({ min: 0, max: 10 ** scale - 1 }))
      .map(([w, f]) => (f === 0 ? String(w) : `${w}.${String(f).padStart(scale, "0")}`))
  const line = fc.record({
    description: fc.constant("line"),
    quantity: decimal(1000, 3).filter((q) => Number(q) > 0),
    unit_price: decimal(100_000, 4),
    vat_rate: fc.constantFrom(0, 5, 9, 11, 19, 21, 5.5)
  })

  it("each amount is the exact product rounded once, and the totals are the sums of the lines", () => {
    fc.assert(fc.property(fc.array(line, { minLength: 1, maxLength: 20 }), (lines) => {
      const stored = lines.map((l) => lineAmounts(l, "RON")!)
      for (const [i, s] of stored.entries()) {
        // Oracle: exact rationals via scaled BigInt, compared within half a minor unit.
        const [qw, qf = ""] = lines[i]!.quantity.split(".")
        const [pw, pf = ""] = lines[i]!.unit_price.split(".")
        const exact = BigInt(qw! + qf) * BigInt(pw! + pf) * 100n
        const scale = 10n ** BigInt(qf.length + pf.length)
        const diff = 2n * (exact - BigInt(s.net_minor) * scale)
        expect(diff <= scale && diff >= -scale).toBe(true)
        expect(s.total_minor).toBe(s.net_minor + s.vat_minor)
        expect(Math.abs(s.vat_minor * 100 - s.net_minor * lines[i]!.vat_rate)).toBeLessThanOrEqual(50.0001)
      }
      const totals = totalsOf(stored)
      expect(totals.total_minor).toBe(stored.reduce((a, s) => a + s.total_minor, 0))
      expect(totals.subtotal_minor + totals.vat_minor).toBe(totals.total_minor)
    }))
  })
})

const invoice = (status: InvoiceStatus, total: number, credited: number, paid: number) =>
  ({ status, total_minor: total, credited_minor: credited, paid_minor: paid }) as Pick<
    InvoiceRecord,
    "status" | "total_minor" | "credited_minor" | "paid_minor"
  >

describe("the spec's state table", () => {
  it("a payment with a balance left → PARTIALLY_PAID; paid in full → PAID", () => {
    expect(invoiceStatus(invoice("SENT", 10_000, 0, 4_000))).toBe("PARTIALLY_PAID")
    expect(invoiceStatus(invoice("PARTIALLY_PAID", 10_000, 0, 10_000))).toBe("PAID")
  })

  it("a credit note reversing it in full → CREDITED; partly → the status of the balance (SENT in the example)", () => {
    expect(invoiceStatus(invoice("SENT", 10_000, 10_000, 0))).toBe("CREDITED")
    expect(invoiceStatus(invoice("PAID", 10_000, 10_000, 10_000))).toBe("CREDITED")
    expect(invoiceStatus(invoice("SENT", 10_000, 2_500, 0))).toBe("SENT")
    expect(invoiceStatus(invoice("PARTIALLY_PAID", 10_000, 2_500, 7_500))).toBe("PAID")
  })

  it("after a reversal the status is recomputed from the balance", () => {
    expect(invoiceStatus(invoice("PAID", 10_000, 0, 0))).toBe("SENT")
    expect(invoiceStatus(invoice("PAID", 10_000, 0, 3_000))).toBe("PARTIALLY_PAID")
  })

  it("drafts and void invoices keep their status whatever the amounts", () => {
    expect(invoiceStatus(invoice("DRAFT", 10_000, 0, 0))).toBe("DRAFT")
    expect(invoiceStatus(invoice("VOID", 10_000, 0, 0))).toBe("VOID")
  })

  it("only a draft is issued, only a SENT invoice is voided", () => {
    const statuses: ReadonlyArray<InvoiceStatus> = ["DRAFT", "SENT", "PARTIALLY_PAID", "PAID", "CREDITED", "VOID"]
    expect(statuses.filter((s) => invoiceLifecycle.target(s, "issue") !== undefined)).toEqual(["DRAFT"])
    expect(statuses.filter((s) => invoiceLifecycle.target(s, "void") !== undefined)).toEqual(["SENT"])
  })

  it("remaining = total − credited − paid, never negative; refund_due is what was paid beyond the net", () => {
    fc.assert(fc.property(fc.nat(1_000_000), fc.nat(1_000_000), fc.nat(1_000_000), (total, c, p) => {
      const credited = Math.min(c, total)
      const b = balanceOf({ total_minor: total, credited_minor: credited, paid_minor: p })
      expect(b.remaining_minor).toBe(Math.max(0, total - credited - p))
      expect(b.refund_due_minor).toBe(Math.max(0, p - (total - credited)))
      expect(b.remaining_minor === 0 || b.refund_due_minor === 0).toBe(true)
    }))
  })

  it("numbers read SERIES-000042", () => {
    expect(formatInvoiceNumber("FCT", 42)).toBe("FCT-000042")
    expect(formatInvoiceNumber("A", 1_234_567)).toBe("A-1234567")
  })
})

describe("withBalance: the invoice after money moved", () => {
  const sent = { status: "SENT", total_minor: 10_000, credited_minor: 0, paid_minor: 0, paid_at: null, updated_at: "t0" } as unknown as InvoiceRecord

  it("recomputes the status, stamps paid_at when it becomes settled, keeps it while settled and clears it when a balance opens", () => {
    const partly = withBalance(sent, { paid_minor: 4_000 }, "t1")
    expect([partly.status, partly.paid_at, partly.updated_at]).toEqual(["PARTIALLY_PAID", null, "t1"])
    const paid = withBalance(partly, { paid_minor: 10_000 }, "t2")
    expect([paid.status, paid.paid_at]).toEqual(["PAID", "t2"])
    expect(withBalance(paid, { paid_minor: 12_000 }, "t3").paid_at).toBe("t2")
    const reopened = withBalance(paid, { paid_minor: 6_000 }, "t4")
    expect([reopened.status, reopened.paid_at]).toEqual(["PARTIALLY_PAID", null])
    expect(withBalance(sent, { credited_minor: 10_000 }, "t5").status).toBe("CREDITED")
  })

  it("is PAID exactly when nothing remains, whatever the order of the moves", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 9_999 }), (paid, credited) => {
      const next = withBalance(sent, { paid_minor: paid, credited_minor: credited }, "t")
      expect(next.status === "PAID").toBe(paid + credited >= 10_000)
      expect(next.paid_at === "t").toBe(next.status === "PAID")
    }))
  })
})
