import { Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { CredentialRepo } from "./auth/CredentialRepo.ts"
import { Credentials } from "./auth/Credentials.ts"
import { ContractRepo } from "./contracts/ContractRepo.ts"
import { Contracts } from "./contracts/Contracts.ts"
import { Outbox } from "./events/Outbox.ts"
import { IdempotencyRepo } from "./idempotency/IdempotencyRepo.ts"
import { ExpenseRepo } from "./expenses/ExpenseRepo.ts"
import { Expenses } from "./expenses/Expenses.ts"
import { LocationRepo } from "./locations/LocationRepo.ts"
import { Locations } from "./locations/Locations.ts"
import { ObligationMonitor } from "./obligations/Monitor.ts"
import { Notifier } from "./obligations/Notifier.ts"
import { ObligationRepo } from "./obligations/ObligationRepo.ts"
import { Obligations } from "./obligations/Obligations.ts"
import { CostComparisons } from "./costing/CostComparisons.ts"
import { CostingSettings } from "./costing/CostingSettings.ts"
import { CostingSettingsRepo } from "./costing/CostingSettingsRepo.ts"
import { RateLimiter } from "./ratelimit/RateLimiter.ts"
import { RouteRepo } from "./routes/RouteRepo.ts"
import { Routes } from "./routes/Routes.ts"
import { OAuthAppRepo } from "./oauth/OAuthAppRepo.ts"
import { OAuthApps } from "./oauth/OAuthApps.ts"
import { OAuthGrantRepo } from "./oauth/OAuthGrantRepo.ts"
import { OAuthServer } from "./oauth/OAuthServer.ts"
import { OAuthSessionRepo } from "./oauth/OAuthSessionRepo.ts"
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
  | ContractRepo
  | ObligationRepo
  | Notifier
  | RouteRepo
  | CostingSettingsRepo
  | RateLimiter
  | OAuthAppRepo
  | OAuthGrantRepo
  | OAuthSessionRepo
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
  ContractRepo.layerSql,
  ObligationRepo.layerSql,
  Notifier.layerSql,
  RouteRepo.layerSql,
  CostingSettingsRepo.layerSql,
  RateLimiter.layerSql,
  OAuthAppRepo.layerSql,
  OAuthGrantRepo.layerSql,
  OAuthSessionRepo.layerSql,
  WebhookRepo.layerSql,
  DeliveryRepo.layerSql
).pipe(Layer.provideMerge(DeliverySignal.layer))

/** Every domain service, over whatever storage is provided. */
export const Services = Layer.mergeAll(OAuthApps.layer, OAuthServer.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(
    Credentials.layer,
    Locations.layer,
    Expenses.layer,
    Contracts.layer,
    Obligations.layer,
    ObligationMonitor.layer,
    Routes.layer,
    CostingSettings.layer,
    CostComparisons.layer,
    Webhooks.layer
  )),
  Layer.provideMerge(Tenancy.layer)
)

export type DomainServices = Layer.Success<typeof Services>
export type DomainServicesRequire = Layer.Services<typeof Services>
