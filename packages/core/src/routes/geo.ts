/**
 * The distance model shared by the built-in optimizer and the cost
 * comparison: great-circle (haversine) distance scaled by a road factor, and
 * driving time at an average speed. Pure functions, no Effect needed.
 */

export interface Point {
  readonly latitude: number
  readonly longitude: number
}

export interface DistanceModel {
  /** Road distance ÷ straight-line distance; 1.3 is the usual figure for mixed urban and regional roads. */
  readonly roadFactor: number
  /** Average driving speed between stops, km/h. */
  readonly averageSpeedKmh: number
}

export const defaultDistanceModel: DistanceModel = { roadFactor: 1.3, averageSpeedKmh: 40 }

/** Mean Earth radius (IUGG), metres. */
const EARTH_RADIUS_M = 6_371_008.8
const RAD = Math.PI / 180

/** Great-circle distance in metres (not rounded). */
export const haversineMetres = (a: Point, b: Point): number => {
  const dLat = (b.latitude - a.latitude) * RAD
  const dLng = (b.longitude - a.longitude) * RAD
  const s = Math.sin(dLat / 2) ** 2 +
    Math.cos(a.latitude * RAD) * Math.cos(b.latitude * RAD) * Math.sin(dLng / 2) ** 2
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(s)))
}

/** Estimated road distance in metres (not rounded). */
export const roadMetres = (model: DistanceModel, a: Point, b: Point): number => haversineMetres(a, b) * model.roadFactor

/** Driving time in whole seconds for a distance in metres. */
export const driveSeconds = (model: DistanceModel, metres: number): number =>
  Math.round(metres * 3.6 / model.averageSpeedKmh)

/**
 * Road length of visiting `stops` in order from `start` (and back to it for a
 * round trip), in whole metres. No stops: 0.
 */
export const pathMetres = (
  model: DistanceModel,
  start: Point,
  stops: ReadonlyArray<Point>,
  roundTrip: boolean
): number => {
  if (stops.length === 0) return 0
  let total = 0
  let previous = start
  for (const stop of stops) {
    total += roadMetres(model, previous, stop)
    previous = stop
  }
  if (roundTrip) total += roadMetres(model, previous, start)
  return Math.round(total)
}

/** Whole metres to kilometres with three decimals, as routes report them. */
export const metresToKm = (metres: number): number => Math.round(metres) / 1000

/** Kilometres as reported back to whole metres. */
export const kmToMetres = (km: number): number => Math.round(km * 1000)
