import { NodeCrypto } from "@effect/platform-node"
import { Effect, type FileSystem, Layer, type Path } from "effect"
import { type Etag, type HttpPlatform, HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import { CoreLayers, Ids, OAuthLifetimes, PasswordHashing, type SecretBox, type WebhookTransport } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { IdempotencyLive } from "../api/idempotency.ts"
import { CurrentRequestId } from "../api/requestContext.ts"
import { SchemaErrorsLive } from "../api/schemaErrors.ts"
import { AuthenticationLive } from "../api/security.ts"
import { RequestBodyLive } from "../api/requestBody.ts"
import { StrictQueryLive } from "../api/strictQuery.ts"
import { AuditHandlers } from "../http/Audit.ts"
import { ContactsHandlers } from "../http/Contacts.ts"
import { ContractsHandlers } from "../http/Contracts.ts"
import { CostingHandlers } from "../http/Costing.ts"
import { CourtHandlers } from "../http/Court.ts"
import { DisplayHandlers } from "../http/Display.ts"
import { ExpensesHandlers } from "../http/Expenses.ts"
import { FleetHandlers } from "../http/Fleet.ts"
import { GrantsHandlers } from "../http/Grants.ts"
import { FiscalHandlers } from "../http/Fiscal.ts"
import { InvoicesHandlers } from "../http/Invoices.ts"
import { LocationsHandlers } from "../http/Locations.ts"
import { MailHandlers } from "../http/Mail.ts"
import { MeteringHandlers } from "../http/Metering.ts"
import { OAuthHandlers } from "../http/OAuth.ts"
import { ObligationsHandlers } from "../http/Obligations.ts"
import { RoutesHandlers } from "../http/Routes.ts"
import { TenancyHandlers } from "../http/Tenancy.ts"
import { OAuthHttpConfig } from "../oauth/protocol.ts"
import { OAuthRoutes } from "../oauth/routes.ts"
import { PortalRoutes } from "../portal/routes.ts"
import { credentialCache } from "./credentialCache.ts"
import { type DatabaseChoice, layerMigratedSql } from "./database.ts"
import { DocsRoutes } from "./docs.ts"
import { CoreConfig, ServerConfig } from "../config/Configuration.ts"
import { FiscalRegistryLive } from "./jobs/fiscal.ts"
import { RoutesConfigLive } from "./routesConfig.ts"
import { WebhooksHandlers } from "../http/Webhooks.ts"
import { webhooksInfrastructure } from "./webhooks.ts"
import { MailSettingsLive } from "./jobs/mail.ts"
import { RecordingSettingsLive } from "./metering.ts"
import { ImportsHandlers } from "../http/Imports.ts"

/** Node's implementations of the crypto services core uses (SHA-256, Argon2id, AES-GCM, HMAC, Ed25519, randomness). */
export const CryptoLive = Layer.mergeAll(
  NodeCrypto.layerDigest,
  NodeCrypto.layerKdf,
  NodeCrypto.layerSecureRandom,
  NodeCrypto.layerAead,
  NodeCrypto.layerMac,
  NodeCrypto.layerSignature
)

/** Core services on SQL storage, with migrations applied, and the configuration they were built with. */
export type CoreLive =
  | CoreLayers.DomainServices
  | CoreLayers.StoragePorts
  | Ids.Ids
  | SqlClient.SqlClient
  | PgClient.PgClient
  | Layer.Success<typeof CryptoLive>
  | SecretBox.SecretBox
  | WebhookTransport.WebhookTransport
  | CoreConfig

/**
 * The bounds of work anyone can cause, as configured: the hashing pool
 * (`OPSPLATFORM_HASH_CONCURRENCY`, `OPSPLATFORM_HASH_QUEUE`) and OAuth's
 * requests per client network (`OPSPLATFORM_OAUTH_PER_NETWORK_PER_MIN`).
 */
const BoundsLive = Layer.mergeAll(
  Layer.effect(PasswordHashing.HashingBudget, Effect.map(CoreConfig, (config) => config.hashing)),
  Layer.effect(OAuthLifetimes.OAuthNetworkLimit, Effect.map(CoreConfig, (config) => ({ perMinute: config.oauthPerNetworkPerMinute })))
)

/** Core services on SQL storage, configured from `CoreConfig` (the environment, or a test's values). */
export const coreLive = (choice: DatabaseChoice): Layer.Layer<CoreLive> =>
  CoreLayers.Services.pipe(
    Layer.provideMerge(FiscalRegistryLive),
    // Over the SQL credential repository: authentication's lookups, cached where changes can be heard.
    Layer.provideMerge(credentialCache(choice)),
    Layer.provideMerge(CoreLayers.SqlStorage),
    Layer.provideMerge(RecordingSettingsLive),
    Layer.provideMerge(RoutesConfigLive),
    Layer.provideMerge(BoundsLive),
    Layer.provideMerge(webhooksInfrastructure(choice)),
    Layer.provideMerge(MailSettingsLive),
    Layer.provideMerge(Ids.Ids.layer),
    Layer.provideMerge(CryptoLive),
    Layer.provideMerge(layerMigratedSql(choice)),
    Layer.provideMerge(CoreConfig.layer),
    Layer.orDie
  )

/** The OAuth issuer (`OPSPLATFORM_PUBLIC_URL`) and the proxies believed (`OPSPLATFORM_TRUSTED_PROXIES`). */
export const OAuthHttpConfigLive = Layer.effect(
  OAuthHttpConfig,
  Effect.map(ServerConfig, (config) => ({ publicUrl: config.publicUrl, trustedProxies: config.trustedProxies }))
)

const json = (status: number, data: unknown) => HttpServerResponse.jsonUnsafe({ data, error: null }, { status })

/** Liveness and readiness, outside /v1 and without credentials. */
export const SystemRoutes = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const sql = yield* SqlClient.SqlClient
  yield* router.add("GET", "/healthz", Effect.succeed(json(200, { status: "ok" })))
  yield* router.add(
    "GET",
    "/readyz",
    sql`SELECT 1`.pipe(
      Effect.timeout("2 seconds"),
      Effect.as(json(200, { status: "ready", database: "ok" })),
      Effect.catchCause(() =>
        Effect.gen(function*() {
          const requestId = yield* CurrentRequestId
          return HttpServerResponse.jsonUnsafe({
            data: null,
            error: { code: "unavailable", message: "The database does not answer", requestId }
          }, { status: 503, headers: { "retry-after": "1" } })
        })
      )
    )
  )
}))

const ApiHandlers = Layer.mergeAll(
  LocationsHandlers,
  ExpensesHandlers,
  ContractsHandlers,
  ObligationsHandlers,
  TenancyHandlers,
  RoutesHandlers,
  CostingHandlers,
  OAuthHandlers,
  WebhooksHandlers,
  ContactsHandlers,
  InvoicesHandlers,
  AuditHandlers,
  FleetHandlers,
  CourtHandlers,
  GrantsHandlers,
  FiscalHandlers,
  MailHandlers,
  DisplayHandlers,
  MeteringHandlers,
  ImportsHandlers
)

/**
 * The /v1 handlers and the middleware they run behind, over whichever core
 * provides the domain services and storage ports: `coreLive` in the server,
 * the memory core in handler tests. The middleware stays in the output because
 * building the routes resolves it as well as the handlers.
 */
export const ApiLive = ApiHandlers.pipe(
  Layer.provideMerge(Layer.mergeAll(AuthenticationLive, SchemaErrorsLive, IdempotencyLive, RequestBodyLive, StrictQueryLive))
)

/** The /v1 routes and their OpenAPI document, over any core (no SQL of their own). */
export const ApiRoutes = HttpApiBuilder.layer(Api, { openapiPath: "/v1/openapi.json" }).pipe(Layer.provide(ApiLive))

type AppRoutesRequire =
  | HttpRouter.HttpRouter
  | CoreLive
  | Etag.Generator
  | FileSystem.FileSystem
  | HttpPlatform.HttpPlatform
  | Path.Path

/** Every route the server answers: /v1, its OpenAPI document, the docs pages, health checks, OAuth, the webhook portal. */
export const AppRoutes: Layer.Layer<never, never, AppRoutesRequire> = Layer.mergeAll(
  ApiRoutes,
  DocsRoutes,
  SystemRoutes,
  OAuthRoutes,
  PortalRoutes
)
