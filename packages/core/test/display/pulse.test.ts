import { describe, expect, it } from "vitest"
import { answerOf, helpAnswer, toneOf } from "../../src/display/pulse/answers.ts"
import { type BucketSum, planFor, type Query, ronMinorOf, seriesOf } from "../../src/display/pulse/figures.ts"
import { counted, formatLei } from "../../src/display/pulse/format.ts"
import { bucketOf, shift, sparkBoundaries, startOf, weekday } from "../../src/display/pulse/periods.ts"

describe("figures written the local way", () => {
  it("writes lei as Romanian and English readers expect", () => {
    expect(formatLei(1234567, "ro")).toBe("12.345,67 lei")
    expect(formatLei(1234567, "en")).toBe("RON 12,345.67")
    expect(formatLei(5, "ro")).toBe("0,05 lei")
    expect(formatLei(0, "en")).toBe("RON 0.00")
    expect(formatLei(99_999_999_999_999, "ro")).toBe("999.999.999.999,99 lei")
    expect(formatLei(-123456, "en")).toBe("-RON 1,234.56")
    expect(formatLei(100000, "ro")).toBe("1.000,00 lei")
  })

  it("puts 'de' between a Romanian number and its noun from 20 on, by the last two digits", () => {
    const invoice = { one: "factură", many: "facturi" }
    expect([0, 1, 2, 19, 20, 99, 100, 101, 119, 120, 1000, 1234].map((n) => counted(n, "ro", invoice))).toEqual([
      "0 facturi",
      "1 factură",
      "2 facturi",
      "19 facturi",
      "20 de facturi",
      "99 de facturi",
      "100 de facturi",
      "101 facturi",
      "119 facturi",
      "120 de facturi",
      "1.000 de facturi",
      "1.234 de facturi"
    ])
    expect([1, 2, 1234].map((n) => counted(n, "en", { one: "invoice", many: "invoices" }))).toEqual([
      "1 invoice",
      "2 invoices",
      "1,234 invoices"
    ])
  })
})

describe("periods", () => {
  it("weeks start on Monday, months on their first day, across years", () => {
    expect(["2026-03-30", "2026-04-01", "2026-04-05", "1970-01-01", "2024-02-29"].map(weekday)).toEqual([0, 2, 6, 3, 3])
    expect(startOf("2026-04-05", "week")).toBe("2026-03-30")
    expect(startOf("2026-01-01", "week")).toBe("2025-12-29")
    expect(startOf("2026-04-17", "month")).toBe("2026-04-01")
    expect(shift("2026-01-01", "month", -1)).toBe("2025-12-01")
    expect(shift("2025-12-01", "month", 1)).toBe("2026-01-01")
    expect(shift("2026-03-30", "week", -6)).toBe("2026-02-16")
  })

  it("a spark's last period stops after today", () => {
    expect(sparkBoundaries("2026-04-01", "month", "2026-04-18")).toEqual([
      "2025-10-01", "2025-11-01", "2025-12-01", "2026-01-01", "2026-02-01", "2026-03-01", "2026-04-01", "2026-04-18"
    ])
    expect(sparkBoundaries("2026-03-01", "month", "2026-04-18").at(-1)).toBe("2026-04-01")
  })

  it("numbers buckets as SQL's width_bucket does, empty periods included", () => {
    const bounds = ["b", "d", "d", "f"]
    expect(["a", "b", "c", "d", "e", "f", "g"].map((v) => bucketOf(v, bounds))).toEqual([0, 1, 1, 3, 3, 4, 4])
  })

  it("reads days in the organization's time zone: a Bucharest day starts at 21:00 or 22:00 UTC the day before", () => {
    const plan = planFor({ topic: "routes_today", period: null }, "2026-04-01", "Europe/Bucharest")
    expect(plan.series.boundaries.slice(-2)).toEqual(["2026-03-31T21:00:00.000Z", "2026-04-01T21:00:00.000Z"])
    const winter = planFor({ topic: "routes_today", period: null }, "2026-03-01", "Europe/Bucharest")
    expect(winter.series.boundaries.at(-1)).toBe("2026-03-01T22:00:00.000Z")
    const collected = planFor({ topic: "collected", period: "week" }, "2026-04-01", "Europe/Bucharest")
    expect(collected.series).toEqual({
      measure: "collected",
      mode: "flow",
      boundaries: ["2026-02-16", "2026-02-23", "2026-03-02", "2026-03-09", "2026-03-16", "2026-03-23", "2026-03-30", "2026-04-02"]
    })
  })
})

describe("amounts in RON", () => {
  it("turns Σ minor × rate into RON minor units once, half to even, for any exponent", () => {
    expect(ronMinorOf(12345n, null, "RON")).toBe(12345)
    // 190.00 EUR at 4.9763: 945.497 RON.
    expect(ronMinorOf(19000n, "4.9763", "EUR")).toBe(94550)
    expect(ronMinorOf(1n, "0.5", "EUR")).toBe(0)
    expect(ronMinorOf(3n, "0.5", "EUR")).toBe(2)
    expect(ronMinorOf(5n, "0.5", "EUR")).toBe(2)
    // 1 234 567.89 USD at 4.123456: 5 090 686.373… RON.
    expect(ronMinorOf(123456789n, "4.123456", "USD")).toBe(509068637)
    // 100 JPY at 0.03 RON: 3 RON. 1 KWD (1000 fils) at 15 RON: 15 RON.
    expect(ronMinorOf(100n, "0.03", "JPY")).toBe(300)
    expect(ronMinorOf(1000n, "15", "KWD")).toBe(1500)
    expect(() => ronMinorOf(1n, "1e5", "EUR")).toThrow(RangeError)
  })

  it("rounds once per currency and period, not once per rate", () => {
    // Two EUR rows at different rates whose halves meet: 0.5 + 0.5 = 1, not 0 + 0.
    const rows: ReadonlyArray<BucketSum> = [
      { bucket: 7, currency: "EUR", rate: "0.5", minor: "1", count: 1 },
      { bucket: 7, currency: "EUR", rate: "0.25", minor: "2", count: 1 }
    ]
    expect(seriesOf(rows, { measure: "invoiced", boundaries: [], mode: "flow" }).money.at(-1)).toBe(1)
  })
})

describe("series from buckets", () => {
  const rows: ReadonlyArray<BucketSum> = [
    { bucket: 0, currency: "RON", rate: null, minor: "100", count: 1 },
    { bucket: 1, currency: "RON", rate: null, minor: "200", count: 2 },
    { bucket: 7, currency: "EUR", rate: "5.0005", minor: "200", count: 1 },
    { bucket: 8, currency: "RON", rate: null, minor: "400", count: 4 }
  ]
  const query = (mode: Query["mode"]): Query => ({ measure: "open_by_due_date", boundaries: [], mode })
  it("a flow counts only its periods; a state folds what is older into the first, and (all) what is later into the last", () => {
    expect(seriesOf(rows, query("flow")).money).toEqual([200, 0, 0, 0, 0, 0, 1000])
    expect(seriesOf(rows, query("past")).money).toEqual([300, 0, 0, 0, 0, 0, 1000])
    expect(seriesOf(rows, query("all")).money).toEqual([300, 0, 0, 0, 0, 0, 1400])
    expect(seriesOf(rows, query("all")).counts).toEqual([3, 0, 0, 0, 0, 0, 5])
  })
  it("expenses in other currencies are counted apart, never summed as lei", () => {
    const series = seriesOf(rows, { measure: "expenses", boundaries: [], mode: "flow" })
    expect(series.money).toEqual([200, 0, 0, 0, 0, 0, 0])
    expect(series.unconverted).toEqual([0, 0, 0, 0, 0, 0, 1])
  })
})

describe("answers", () => {
  const series = (values: ReadonlyArray<number>, counts: ReadonlyArray<number> = values.map(() => 1)) => ({
    money: values,
    counts,
    unconverted: values.map(() => 0)
  })

  it("writes the figure in a sentence of the locale, with its KPI", () => {
    const collected = { topic: "collected", period: "today" } as const
    const ro = answerOf("cât am încasat azi?", collected, series([0, 0, 0, 0, 0, 100, 250050], [0, 0, 0, 0, 0, 1, 3]), true, "ro")
    expect(ro.answer).toBe("Azi ați încasat 2.500,50 lei din 3 plăți.")
    expect(ro.kpi).toEqual({
      id: "collected_today",
      labelKey: "pulse.collected_today",
      label: "Încasat azi",
      value: { minor: 250050, currency: "RON" },
      count: 3,
      delta: 249950,
      spark: [0, 0, 0, 0, 0, 100, 250050],
      tone: "positive",
      unit: "money"
    })
    const en = answerOf("", { topic: "routes_in_progress", period: null }, series([0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1, 0]), false, "en")
    expect(en.answer).toBe("1 route is in progress now.")
    expect(en.kpi).toMatchObject({ value: { minor: 0, currency: "RON" }, count: 1, unit: "count", spark: [0, 0, 0, 0, 0, 1, 0], delta: -1 })
    const none = answerOf("", { topic: "invoices_overdue", period: null }, series([0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0]), false, "ro")
    expect([none.answer, none.kpi?.tone]).toEqual(["Nu aveți facturi restante.", "positive"])
  })

  it("chooses the tone by the documented rules", () => {
    const figure = (spark: ReadonlyArray<number>, count = 1) => ({ value: 0, count, spark, unit: "money" as const, unconverted: 0 })
    const up = [0, 0, 0, 0, 0, 1, 2]
    const down = [0, 0, 0, 0, 0, 2, 1]
    expect(toneOf({ topic: "invoiced", period: "month" }, figure(up))).toBe("positive")
    expect(toneOf({ topic: "invoiced", period: "month" }, figure(down))).toBe("neutral")
    expect(toneOf({ topic: "collected", period: "last_month" }, figure(down))).toBe("negative")
    expect(toneOf({ topic: "expenses", period: "month" }, figure(up))).toBe("warning")
    expect(toneOf({ topic: "expenses", period: "month" }, figure(down))).toBe("neutral")
    expect(toneOf({ topic: "invoices_overdue", period: null }, figure(up))).toBe("negative")
    expect(toneOf({ topic: "invoices_overdue", period: null }, figure(down))).toBe("warning")
    expect(toneOf({ topic: "invoices_overdue", period: null }, figure(down, 0))).toBe("positive")
    expect(toneOf({ topic: "obligations_overdue", period: null }, figure(up, 2))).toBe("negative")
    expect(toneOf({ topic: "obligations_due_week", period: null }, figure(up, 2))).toBe("warning")
    expect(toneOf({ topic: "routes_completed_today", period: null }, figure(up, 0))).toBe("neutral")
    expect(toneOf({ topic: "open_balance", period: null }, figure(up))).toBe("neutral")
  })

  it("answers what it cannot place with what it can answer, and no KPI", () => {
    expect(helpAnswer("x", "ro")).toMatchObject({ transcript: "x", kpi: null })
    expect(helpAnswer("x", "ro").answer).toContain("facturile restante")
    expect(helpAnswer("x", "en").answer).toContain("overdue invoices")
  })
})
