import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { defaultDistanceModel, driveSeconds, haversineMetres, pathMetres } from "../../src/routes/geo.ts"
import { BUILTIN_OPTIMIZER, builtinOptimizer, planRoute, routeMinutes } from "../../src/routes/Optimizer.ts"
import { east, equatorModel } from "../support/equator.ts"

describe("distance model", () => {
  it("measures great-circle distance (Bucharest–Cluj is about 324 km as the crow flies)", () => {
    const bucharest = { latitude: 44.4268, longitude: 26.1025 }
    const cluj = { latitude: 46.7712, longitude: 23.6236 }
    expect(haversineMetres(bucharest, cluj) / 1000).toBeCloseTo(324.4, 0)
    expect(haversineMetres(bucharest, bucharest)).toBe(0)
  })

  it("scales by the road factor and drives at the average speed", () => {
    // 1 km straight line × 1.3 = 1300 m of road; at 40 km/h (11.11 m/s) that is 117 s.
    const a = { latitude: 0, longitude: 0 }
    const b = { latitude: 0, longitude: 1000 / haversineMetres(a, { latitude: 0, longitude: 1 }) }
    expect(pathMetres(defaultDistanceModel, a, [b], false)).toBe(1300)
    expect(driveSeconds(defaultDistanceModel, 1300)).toBe(117)
  })

  it("measures a route in its stop order, and back to the start on a round trip", () => {
    // 0 → 3 → 1 → 2: 3000 + 2000 + 1000 = 6000; back home from 2 adds 2000.
    expect(pathMetres(equatorModel, east(0), [east(3), east(1), east(2)], false)).toBe(6000)
    expect(pathMetres(equatorModel, east(0), [east(3), east(1), east(2)], true)).toBe(8000)
    expect(pathMetres(equatorModel, east(0), [], true)).toBe(0)
  })
})

describe("built-in optimizer (nearest neighbour + 2-opt)", () => {
  it("visits stops on a line in order from the start", () => {
    // Start 0; stops at 3, 1, 2 km: nearest neighbour goes 1, 2, 3; round trip 1 + 1 + 1 + 3 = 6 km.
    const plan = planRoute(equatorModel, { start: east(0), roundTrip: true, stops: [east(3), east(1), east(2)] })
    expect(plan.order).toEqual([1, 2, 0])
    expect(plan.metres).toBe(6000)
  })

  it("untangles a crossing that nearest neighbour leaves behind", () => {
    // Nearest neighbour from (0,0): B (0.9 km) then A, C, D — 2-opt must find a tour no longer than it.
    const km = (x: number, y: number) => ({ latitude: y / 111.19492664455873, longitude: x / 111.19492664455873 })
    const stops = [km(1, 1), km(0.9, 0), km(2, 0), km(2, 1)]
    const input = { start: km(0, 0), roundTrip: true, stops }
    const plan = planRoute({ roadFactor: 1, averageSpeedKmh: 40 }, input)
    const nearest = pathMetres({ roadFactor: 1, averageSpeedKmh: 40 }, input.start, [stops[1]!, stops[0]!, stops[3]!, stops[2]!], true)
    expect(plan.metres).toBeLessThan(nearest)
    expect(plan.metres).toBe(pathMetres({ roadFactor: 1, averageSpeedKmh: 40 }, input.start, plan.order.map((i) => stops[i]!), true))
  })

  it("keeps the given order when nearest neighbour and 2-opt cannot match it", () => {
    // Start at 3 km; stops at 0, 4 and 7 km, open path. As given: 3 + 4 + 3 = 10 km. Nearest
    // neighbour goes 4, 7, 0: 1 + 3 + 7 = 11 km, and no segment reversal of that path gets back to 10.
    const plan = planRoute(equatorModel, { start: east(3), roundTrip: false, stops: [east(0), east(4), east(7)] })
    expect(plan.order).toEqual([0, 1, 2])
    expect(plan.metres).toBe(10_000)
  })

  it("is deterministic and returns every stop once, never longer than the given order", () => {
    const point = fc.record({
      latitude: fc.double({ min: 44, max: 45, noNaN: true }),
      longitude: fc.double({ min: 25, max: 27, noNaN: true })
    })
    fc.assert(
      fc.property(point, fc.array(point, { minLength: 1, maxLength: 25 }), fc.boolean(), (start, stops, roundTrip) => {
        const first = planRoute(defaultDistanceModel, { start, roundTrip, stops })
        const again = planRoute(defaultDistanceModel, { start, roundTrip, stops })
        expect(again).toEqual(first)
        expect([...first.order].sort((a, b) => a - b)).toEqual(stops.map((_, i) => i))
        expect(first.metres).toBe(pathMetres(defaultDistanceModel, start, first.order.map((i) => stops[i]!), roundTrip))
        expect(first.metres).toBeLessThanOrEqual(pathMetres(defaultDistanceModel, start, stops, roundTrip) + 1)
      }),
      { numRuns: 150 }
    )
  })

  it("reports kilometres, minutes (driving plus service) and its name", async () => {
    const optimizer = builtinOptimizer(equatorModel)
    const result = await Effect.runPromise(optimizer.optimize({
      start: east(0),
      roundTrip: false,
      capacityKg: null,
      capacityParcels: null,
      stops: [2, 1].map((km, i) => ({
        ...east(km),
        id: `s${i}`,
        service_minutes: 10,
        parcels: 1,
        weight_kg: 0,
        window_start: null,
        window_end: null
      }))
    }))
    // Open path 0 → 1 → 2 km: 2000 m, 200 s driving + 20 min service = 23.33 → 23 minutes.
    expect(result).toEqual({ order: ["s1", "s0"], totalDistanceKm: 2, totalDurationMinutes: 23, optimizer: BUILTIN_OPTIMIZER })
    expect(routeMinutes(equatorModel, 2000, 20)).toBe(23)
  })
})
