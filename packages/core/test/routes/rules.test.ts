import { describe, expect, it } from "vitest"
import { routeActions, routeStatuses } from "../../src/routes/model.ts"
import {
  capacityOverflow,
  editableRouteFields,
  formatRouteNumber,
  routeTransitions,
  stopsEditable,
  transition,
  windowIsOrdered
} from "../../src/routes/rules.ts"

/** The lifecycle as the issue states it: action, the statuses it starts from, where it leads. */
const expected: Record<string, string> = {
  "DRAFT optimize": "PLANNED",
  "PLANNED optimize": "PLANNED",
  "PLANNED dispatch": "DISPATCHED",
  "DISPATCHED dispatch": "DISPATCHED",
  "DISPATCHED start": "IN_PROGRESS",
  "IN_PROGRESS complete": "COMPLETED",
  "DRAFT cancel": "CANCELLED",
  "PLANNED cancel": "CANCELLED",
  "DISPATCHED cancel": "CANCELLED"
}

describe("delivery route transitions", () => {
  for (const from of routeStatuses) {
    for (const action of routeActions) {
      const to = expected[`${from} ${action}`]
      it(`${action} from ${from} ${to === undefined ? "is refused" : `leads to ${to}`}`, () => {
        expect(transition(from, action)).toBe(to)
      })
    }
  }

  it("the table holds exactly the nine allowed moves", () => {
    const moves = Object.entries(routeTransitions).flatMap(([action, rule]) => rule.from.map((from) => `${from} ${action}`))
    expect(new Set(moves)).toEqual(new Set(Object.keys(expected)))
  })

  it("completed and cancelled routes are final", () => {
    for (const action of routeActions) {
      expect(transition("COMPLETED", action)).toBeUndefined()
      expect(transition("CANCELLED", action)).toBeUndefined()
    }
  })
})

describe("what may change in each status", () => {
  it("stops change only while DRAFT or PLANNED", () => {
    expect(routeStatuses.filter(stopsEditable)).toEqual(["DRAFT", "PLANNED"])
  })

  it("a dispatched route may change driver, vehicle, name and notes; on the road only notes; finished nothing", () => {
    expect(editableRouteFields("DRAFT")).toBe("all")
    expect(editableRouteFields("PLANNED")).toBe("all")
    expect([...(editableRouteFields("DISPATCHED") as Set<string>)].sort()).toEqual(["driver_id", "name", "notes", "vehicle_id"])
    expect([...(editableRouteFields("IN_PROGRESS") as Set<string>)]).toEqual(["notes"])
    expect((editableRouteFields("COMPLETED") as Set<string>).size).toBe(0)
    expect((editableRouteFields("CANCELLED") as Set<string>).size).toBe(0)
  })
})

describe("capacity", () => {
  const stops = [{ parcels: 3, weight_kg: 10.25 }, { parcels: 2, weight_kg: 4.75 }]

  it("fits when the totals are within capacity or it is unset", () => {
    // 5 parcels, 15.000 kg
    expect(capacityOverflow(stops, { capacity_parcels: 5, capacity_kg: 15 })).toBeUndefined()
    expect(capacityOverflow(stops, { capacity_parcels: null, capacity_kg: null })).toBeUndefined()
  })

  it("reports each overflowing dimension with its total and capacity", () => {
    expect(capacityOverflow(stops, { capacity_parcels: 4, capacity_kg: 15 })).toEqual({ parcels: { total: 5, capacity: 4 } })
    expect(capacityOverflow(stops, { capacity_parcels: null, capacity_kg: 14.999 })).toEqual({
      weightKg: { total: 15, capacity: 14.999 }
    })
  })

  it("sums weights exactly, in grams (0.1 + 0.2 is 0.3)", () => {
    expect(capacityOverflow([{ parcels: 1, weight_kg: 0.1 }, { parcels: 1, weight_kg: 0.2 }], { capacity_parcels: null, capacity_kg: 0.3 }))
      .toBeUndefined()
  })
})

describe("small rules", () => {
  it("a time window ends after it starts; an open end is fine", () => {
    expect(windowIsOrdered("09:00", "09:30")).toBe(true)
    expect(windowIsOrdered("09:30", "09:30")).toBe(false)
    expect(windowIsOrdered("10:00", "09:59")).toBe(false)
    expect(windowIsOrdered(null, "08:00")).toBe(true)
    expect(windowIsOrdered("08:00", null)).toBe(true)
  })

  it("route numbers are R- and at least six digits", () => {
    expect(formatRouteNumber(1)).toBe("R-000001")
    expect(formatRouteNumber(1234567)).toBe("R-1234567")
  })
})
