import { type DistanceModel, haversineMetres, type Point } from "../../src/routes/geo.ts"

/**
 * A distance model for hand-computed examples: on the equator, one degree of
 * longitude is exactly 1000 road metres, and driving at 36 km/h takes one
 * second per 10 metres.
 */
export const equatorModel: DistanceModel = {
  roadFactor: 1000 / haversineMetres({ latitude: 0, longitude: 0 }, { latitude: 0, longitude: 1 }),
  averageSpeedKmh: 36
}

/** The point `km` kilometres east of (0, 0) in `equatorModel`. */
export const east = (km: number): Point => ({ latitude: 0, longitude: km })
