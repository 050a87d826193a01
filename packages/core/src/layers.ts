import { Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { CredentialRepo } from "./auth/CredentialRepo.ts"
import { Credentials } from "./auth/Credentials.ts"
import { Outbox } from "./events/Outbox.ts"
import { IdempotencyRepo } from "./idempotency/IdempotencyRepo.ts"
import { ExpenseRepo } from "./expenses/ExpenseRepo.ts"
import { Expenses } from "./expenses/Expenses.ts"
import { LocationRepo } from "./locations/LocationRepo.ts"
import { Locations } from "./locations/Locations.ts"
import type { Ids } from "./shared/Ids.ts"
import { Transactor } from "./shared/Transactor.ts"
import { TenancyRepo } from "./tenancy/TenancyRepo.ts"
import { Tenancy } from "./tenancy/Tenancy.ts"
import { DeliveryRepo } from "./webhooks/DeliveryRepo.ts"
import { DeliverySignal } from "./webhooks/DeliverySignal.ts"
import { WebhookRepo } from "./webhooks/WebhookRepo.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"

/**
 * Every storage port on SQL. A host with its own storage provides its own
 * layers for these same ports instead (see @opsplatform/testing for the
 * in-memory ones and the conformance suites they pass).
 */
export type StoragePorts =
  | TenancyRepo
  | CredentialRepo
  | LocationRepo
  | ExpenseRepo
  | Outbox
  | Transactor
  | IdempotencyRepo
  | WebhookRepo
  | DeliveryRepo
  | DeliverySignal

export const SqlStorage: Layer.Layer<StoragePorts, never, SqlClient.SqlClient | Ids> = Layer.mergeAll(
  TenancyRepo.layerSql,
  CredentialRepo.layerSql,
  LocationRepo.layerSql,
  ExpenseRepo.layerSql,
  Outbox.layerSql,
  Transactor.layerSql,
  IdempotencyRepo.layerSql,
  WebhookRepo.layerSql,
  DeliveryRepo.layerSql
).pipe(Layer.provideMerge(DeliverySignal.layer))

/** Every domain service, over whatever storage is provided. */
export const Services = Layer.mergeAll(Credentials.layer, Locations.layer, Expenses.layer, Webhooks.layer).pipe(
  Layer.provideMerge(Tenancy.layer)
)

export type DomainServices = Layer.Success<typeof Services>
export type DomainServicesRequire = Layer.Services<typeof Services>
