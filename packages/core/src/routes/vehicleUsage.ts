import { Effect, Layer } from "effect"
import { VehicleUsage } from "../fleet/VehicleUsage.ts"
import { RouteRepo } from "./RouteRepo.ts"

/** Routes hold their vehicle until they are COMPLETED or CANCELLED. */
export const RouteVehicleUsage: Layer.Layer<VehicleUsage, never, RouteRepo> = Layer.effect(
  VehicleUsage,
  Effect.map(RouteRepo, (routes) =>
    VehicleUsage.of({
      holds: (tenant, vehicleId) =>
        Effect.map(routes.unfinishedWithVehicle(tenant, vehicleId), (found) =>
          found.map((r) => ({ kind: "delivery route" as const, id: r.id, label: r.number, status: r.status })))
    }))
)
