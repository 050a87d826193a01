import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ObligationStatus } from "../../src/obligations/model.ts"
import {
  actionTarget,
  addDays,
  addMonthsAnchored,
  anchorDayOf,
  canTransition,
  daysBetween,
  daysInMonth,
  deriveBucket,
  hasEvidence,
  localDate,
  nextDueDate,
  noticesDue,
  obligationTransitions
} from "../../src/obligations/rules.ts"

const statuses: ReadonlyArray<ObligationStatus> = ["pending", "completed", "cancelled"]
const allowed = new Set(["pending>completed", "pending>cancelled", "completed>pending"])

describe("obligation transitions", () => {
  for (const from of statuses) {
    for (const to of statuses) {
      const expected = allowed.has(`${from}>${to}`)
      it(`${from} → ${to} is ${expected ? "allowed" : "refused"}`, () => {
        expect(canTransition(from, to)).toBe(expected)
      })
    }
  }

  it("the table has no move outside the decided set, and each action names its target", () => {
    const moves = Object.entries(obligationTransitions).flatMap(([from, tos]) => tos.map((to) => `${from}>${to}`))
    expect(new Set(moves)).toEqual(allowed)
    expect(actionTarget).toEqual({ complete: "completed", reopen: "pending", cancel: "cancelled" })
  })
})

/** A valid calendar date between 1900 and 2199. */
const dateArb = fc.date({ min: new Date(Date.UTC(1900, 0, 1)), max: new Date(Date.UTC(2199, 11, 31)), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10))
const utcDay = (date: string) => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)))

describe("calendar arithmetic", () => {
  it("knows the length of every month, leap years included", () => {
    expect([2027, 2028, 2100, 2000].map((y) => daysInMonth(y, 2))).toEqual([28, 29, 28, 29])
    expect([1, 3, 4, 6, 9, 11, 12].map((m) => daysInMonth(2026, m))).toEqual([31, 31, 30, 30, 30, 30, 31])
  })

  it("adds days and counts them as the UTC calendar does", () => {
    fc.assert(fc.property(dateArb, fc.integer({ min: -800, max: 800 }), (date, days) => {
      const moved = addDays(date, days)
      expect(moved).toBe(new Date(utcDay(date) + days * 86_400_000).toISOString().slice(0, 10))
      expect(daysBetween(date, moved)).toBe(days)
      expect(addDays(moved, -days)).toBe(date)
    }))
  })
})

describe("recurrence keeps its anchor day", () => {
  it("month ends: Jan 31 → Feb 29 → Mar 31 in 2028, Feb 28 in 2027", () => {
    const chain = (start: string, recurrence: "monthly" | "quarterly" | "yearly", steps: number) => {
      const anchor = anchorDayOf(start)
      const dates = [start]
      for (let i = 0; i < steps; i++) dates.push(nextDueDate(dates[dates.length - 1]!, recurrence, anchor)!)
      return dates
    }
    expect(chain("2028-01-31", "monthly", 4)).toEqual(["2028-01-31", "2028-02-29", "2028-03-31", "2028-04-30", "2028-05-31"])
    expect(chain("2027-01-31", "monthly", 2)).toEqual(["2027-01-31", "2027-02-28", "2027-03-31"])
    expect(chain("2028-01-30", "monthly", 2)).toEqual(["2028-01-30", "2028-02-29", "2028-03-30"])
    expect(chain("2027-11-30", "quarterly", 3)).toEqual(["2027-11-30", "2028-02-29", "2028-05-30", "2028-08-30"])
    expect(chain("2028-02-29", "yearly", 4)).toEqual(["2028-02-29", "2029-02-28", "2030-02-28", "2031-02-28", "2032-02-29"])
    expect(chain("2026-12-15", "monthly", 1)).toEqual(["2026-12-15", "2027-01-15"])
    expect(nextDueDate("2028-01-31", "none", 31)).toBeUndefined()
  })

  it("ends at the end of the date range: no due date after 9999-12-31", () => {
    expect(nextDueDate("9999-11-15", "monthly", 15)).toBe("9999-12-15")
    expect(nextDueDate("9999-12-15", "monthly", 15)).toBeUndefined()
    expect(nextDueDate("9999-10-31", "quarterly", 31)).toBeUndefined()
    expect(nextDueDate("9998-12-31", "yearly", 31)).toBe("9999-12-31")
    expect(nextDueDate("9999-01-01", "yearly", 1)).toBeUndefined()
  })

  it("lands in the right month, on the anchor or the month's last day", () => {
    fc.assert(fc.property(dateArb, fc.integer({ min: 1, max: 31 }), fc.integer({ min: 1, max: 60 }), (date, anchor, months) => {
      const next = addMonthsAnchored(date, months, anchor)
      const index = (d: string) => Number(d.slice(0, 4)) * 12 + Number(d.slice(5, 7)) - 1
      expect(index(next) - index(date)).toBe(months)
      const y = Number(next.slice(0, 4))
      const m = Number(next.slice(5, 7))
      expect(Number(next.slice(8, 10))).toBe(Math.min(anchor, daysInMonth(y, m)))
    }))
  })

  it("never drifts: n steps of k months equal one step of n·k months", () => {
    fc.assert(fc.property(
      dateArb,
      fc.constantFrom(1, 3, 12),
      fc.integer({ min: 1, max: 30 }),
      (start, k, n) => {
        const anchor = anchorDayOf(start)
        let d = start
        for (let i = 0; i < n; i++) d = addMonthsAnchored(d, k, anchor)
        expect(d).toBe(addMonthsAnchored(start, n * k, anchor))
        expect(d > start).toBe(true)
      }
    ))
  })
})

describe("the organization's today", () => {
  it("crosses midnight at the zone's midnight, not UTC's", () => {
    expect(localDate(Date.UTC(2026, 0, 14, 21, 59, 59), "Europe/Bucharest")).toBe("2026-01-14")
    expect(localDate(Date.UTC(2026, 0, 14, 22, 0, 0), "Europe/Bucharest")).toBe("2026-01-15")
    // Summer time (UTC+3) from 2026-03-29 03:00 local.
    expect(localDate(Date.UTC(2026, 2, 29, 20, 59, 59), "Europe/Bucharest")).toBe("2026-03-29")
    expect(localDate(Date.UTC(2026, 2, 29, 21, 0, 0), "Europe/Bucharest")).toBe("2026-03-30")
    expect(localDate(Date.UTC(2026, 0, 15, 7, 59, 59), "America/Los_Angeles")).toBe("2026-01-14")
    expect(localDate(Date.UTC(2026, 0, 15, 8, 0, 0), "America/Los_Angeles")).toBe("2026-01-15")
    expect(localDate(Date.UTC(2028, 1, 29, 12), "UTC")).toBe("2028-02-29")
  })

  it("is the UTC date shifted by the zone's offset, never more than a day away", () => {
    fc.assert(fc.property(
      fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2199, 0, 1) }),
      fc.integer({ min: -12, max: 14 }),
      (ms, offset) => {
        // Etc/GMT-N is N hours ahead of UTC (the sign is POSIX's).
        const zone = offset === 0 ? "UTC" : `Etc/GMT${offset > 0 ? "-" : "+"}${Math.abs(offset)}`
        expect(localDate(ms, zone)).toBe(new Date(ms + offset * 3_600_000).toISOString().slice(0, 10))
      }
    ))
    fc.assert(fc.property(
      fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }),
      fc.constantFrom("Europe/Bucharest", "America/Los_Angeles", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu"),
      (ms, zone) => {
        expect(Math.abs(daysBetween(new Date(ms).toISOString().slice(0, 10), localDate(ms, zone)))).toBeLessThanOrEqual(1)
      }
    ))
  })
})

const obligationArb = fc.record({
  status: fc.constantFrom<ObligationStatus>("pending", "completed", "cancelled"),
  due_date: dateArb,
  remind_days_before: fc.integer({ min: 0, max: 365 })
})

describe("buckets", () => {
  it("follows the decided definitions at their boundaries", () => {
    const o = (due_date: string, remind_days_before = 7, status: ObligationStatus = "pending") => ({ status, due_date, remind_days_before })
    const today = "2028-03-01"
    expect(deriveBucket(o("2028-02-29"), today)).toBe("overdue")
    expect(deriveBucket(o("2028-03-01", 0), today)).toBe("due_soon")
    expect(deriveBucket(o("2028-03-08", 7), today)).toBe("due_soon")
    expect(deriveBucket(o("2028-03-09", 7), today)).toBe("upcoming")
    expect(deriveBucket(o("2029-03-01", 365), today)).toBe("due_soon")
    expect(deriveBucket(o("2029-03-02", 365), today)).toBe("upcoming")
    expect(deriveBucket(o("2020-01-01", 7, "completed"), today)).toBe("done")
    expect(deriveBucket(o("2099-01-01", 7, "cancelled"), today)).toBe("done")
  })

  it("is done exactly when not pending, and otherwise agrees with the day counts", () => {
    fc.assert(fc.property(obligationArb, dateArb, (o, today) => {
      const bucket = deriveBucket(o, today)
      const daysLeft = daysBetween(today, o.due_date)
      const expected = o.status !== "pending"
        ? "done"
        : daysLeft < 0
        ? "overdue"
        : daysLeft <= o.remind_days_before
        ? "due_soon"
        : "upcoming"
      expect(bucket).toBe(expected)
    }))
  })

  it("only moves forward as days pass: upcoming → due_soon → overdue", () => {
    const order = { upcoming: 0, due_soon: 1, overdue: 2, done: 3 }
    fc.assert(fc.property(obligationArb, dateArb, fc.integer({ min: 0, max: 400 }), (o, today, later) => {
      expect(order[deriveBucket(o, addDays(today, later))]).toBeGreaterThanOrEqual(order[deriveBucket(o, today)])
    }))
  })
})

describe("notices due", () => {
  it("reminds inside the window, notices when overdue, escalates after the delay", () => {
    fc.assert(fc.property(obligationArb, dateArb, fc.integer({ min: 0, max: 365 }), (o, today, delay) => {
      const due = noticesDue(o, today, delay)
      const bucket = deriveBucket(o, today)
      expect(due.includes("reminder")).toBe(bucket === "due_soon")
      expect(due.includes("overdue")).toBe(bucket === "overdue")
      expect(due.includes("escalation")).toBe(bucket === "overdue" && daysBetween(o.due_date, today) >= delay)
    }))
    const pending = { status: "pending" as const, due_date: "2026-01-10", remind_days_before: 7 }
    expect(noticesDue(pending, "2026-01-12", 3)).toEqual(["overdue"])
    expect(noticesDue(pending, "2026-01-13", 3)).toEqual(["overdue", "escalation"])
    expect(noticesDue(pending, "2026-01-11", 0)).toEqual(["overdue", "escalation"])
    expect(noticesDue(pending, "2026-01-10", 0)).toEqual(["reminder"])
  })
})

describe("evidence", () => {
  it("exists with a document or a note that is not blank", () => {
    expect(hasEvidence({ evidence_document_id: null, evidence_note: null })).toBe(false)
    expect(hasEvidence({ evidence_document_id: null, evidence_note: "  " })).toBe(false)
    expect(hasEvidence({ evidence_document_id: null, evidence_note: "Paid by wire" })).toBe(true)
    expect(hasEvidence({ evidence_document_id: "00000000-0000-4000-8000-000000000001", evidence_note: null })).toBe(true)
  })
})
