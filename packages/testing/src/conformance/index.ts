export * from "./credentials.ts"
export * from "./expenses.ts"
export * from "./idempotency.ts"
export * from "./locations.ts"
export * from "./obligations.ts"
export * from "./routes.ts"
export * from "./oauth.ts"
export * from "./support.ts"
export * from "./tenancy.ts"
export * from "./transactions.ts"
export * from "./webhooks.ts"

import type { Effect, Layer } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import type { Ids } from "@opsplatform/core/shared/Ids"
import { credentialRepoConformance } from "./credentials.ts"
import { expenseRepoConformance } from "./expenses.ts"
import { idempotencyRepoConformance } from "./idempotency.ts"
import { locationRepoConformance } from "./locations.ts"
import { obligationsConformance } from "./obligations.ts"
import { routesConformance } from "./routes.ts"
import { oauthRepoConformance } from "./oauth.ts"
import { tenancyRepoConformance } from "./tenancy.ts"
import { transactorConformance } from "./transactions.ts"

/** Runs every port's conformance suite against one storage implementation. */
export const storageConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>,
  countEvents: (organizationId: string, eventId: string) => Effect.Effect<number, unknown, CoreLayers.StoragePorts | Ids>
) => {
  tenancyRepoConformance(name, storage)
  credentialRepoConformance(name, storage)
  locationRepoConformance(name, storage)
  expenseRepoConformance(name, storage)
  transactorConformance(name, storage, countEvents)
  idempotencyRepoConformance(name, storage)
  obligationsConformance(name, storage)
  routesConformance(name, storage, countEvents)
  oauthRepoConformance(name, storage)
}
