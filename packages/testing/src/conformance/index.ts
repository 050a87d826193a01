export * from "./audit.ts"
export * from "./contracts.ts"
export * from "./costing.ts"
export * from "./court.ts"
export * from "./credentials.ts"
export * from "./display.ts"
export * from "./expenses.ts"
export * from "./fleet.ts"
export * from "./grants.ts"
export * from "./fiscal.ts"
export * from "./idempotency.ts"
export * from "./imports.ts"
export * from "./invoices.ts"
export * from "./locations.ts"
export * from "./mail.ts"
export * from "./metering.ts"
export * from "./obligations.ts"
export * from "./routes.ts"
export * from "./oauth.ts"
export * from "./ratelimit.ts"
export * from "./support.ts"
export * from "./tenancy.ts"
export * from "./transactions.ts"
export * from "./webhooks.ts"

import type { Effect, Layer } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import type { Ids } from "@opsplatform/core/shared/Ids"
import { auditRepoConformance } from "./audit.ts"
import { contractRepoConformance } from "./contracts.ts"
import { costingSettingsRepoConformance } from "./costing.ts"
import { courtConformance } from "./court.ts"
import { credentialRepoConformance } from "./credentials.ts"
import { deviceRepoConformance, pulseConformance } from "./display.ts"
import { expenseRepoConformance } from "./expenses.ts"
import { fleetConformance } from "./fleet.ts"
import { grantRepoConformance } from "./grants.ts"
import { fiscalConformance } from "./fiscal.ts"
import { idempotencyRepoConformance } from "./idempotency.ts"
import { importsConformance } from "./imports.ts"
import { invoicesConformance } from "./invoices.ts"
import { locationRepoConformance } from "./locations.ts"
import { mailboxRepoConformance } from "./mail.ts"
import { meteringConformance } from "./metering.ts"
import { obligationsConformance } from "./obligations.ts"
import { routesConformance } from "./routes.ts"
import { oauthRepoConformance } from "./oauth.ts"
import { rateLimiterConformance } from "./ratelimit.ts"
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
  contractRepoConformance(name, storage)
  obligationsConformance(name, storage)
  routesConformance(name, storage, countEvents)
  costingSettingsRepoConformance(name, storage)
  rateLimiterConformance(name, storage)
  oauthRepoConformance(name, storage)
  invoicesConformance(name, storage, countEvents)
  auditRepoConformance(name, storage)
  fleetConformance(name, storage, countEvents)
  courtConformance(name, storage, countEvents)
  grantRepoConformance(name, storage)
  fiscalConformance(name, storage, countEvents)
  mailboxRepoConformance(name, storage)
  deviceRepoConformance(name, storage)
  pulseConformance(name, storage)
  meteringConformance(name, storage)
  importsConformance(name, storage)
}
