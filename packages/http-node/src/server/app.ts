import { NodeCrypto } from "@effect/platform-node"
import { Effect, type FileSystem, Layer, type Path } from "effect"
import { type Etag, type HttpPlatform, HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiSwagger } from "effect/http-api"
import type { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import { CoreLayers, Ids, type SecretBox, type WebhookTransport } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { IdempotencyLive } from "../api/idempotency.ts"
import { SchemaErrorsLive } from "../api/schemaErrors.ts"
import { AuthenticationLive } from "../api/security.ts"
import { AppsHandlers } from "../http/Apps.ts"
import { ContractsHandlers } from "../http/Contracts.ts"
import { CostingSettingsHandlers, DeliveryRoutesHandlers } from "../http/DeliveryRoutes.ts"
import { ExpensesHandlers } from "../http/Expenses.ts"
import { LocationsHandlers } from "../http/Locations.ts"
import { ObligationsHandlers } from "../http/Obligations.ts"
import { OrganizationHandlers } from "../http/Organization.ts"
import { OAuthRoutes } from "../oauth/routes.ts"
import { type DatabaseChoice, layerMigratedSql } from "./database.ts"
import { RoutesConfigLive } from "./routesConfig.ts"
import { WebhooksHandlers } from "../http/Webhooks.ts"
import { webhooksInfrastructure } from "./webhooks.ts"

/** Node's implementations of the crypto services core uses (SHA-256, Argon2id, AES-GCM, HMAC, randomness). */
export const CryptoLive = Layer.mergeAll(
  NodeCrypto.layerDigest,
  NodeCrypto.layerKdf,
  NodeCrypto.layerSecureRandom,
  NodeCrypto.layerAead,
  NodeCrypto.layerMac
)

/** Core services on SQL storage, with migrations applied. */
export type CoreLive =
  | CoreLayers.DomainServices
  | CoreLayers.StoragePorts
  | Ids.Ids
  | SqlClient.SqlClient
  | PgClient.PgClient
  | Layer.Success<typeof CryptoLive>
  | SecretBox.SecretBox
  | WebhookTransport.WebhookTransport

export const coreLive = (choice: DatabaseChoice): Layer.Layer<CoreLive> =>
  CoreLayers.Services.pipe(
    Layer.provideMerge(CoreLayers.SqlStorage),
    Layer.provideMerge(RoutesConfigLive),
    Layer.provideMerge(webhooksInfrastructure(choice)),
    Layer.provideMerge(Ids.Ids.layer),
    Layer.provideMerge(CryptoLive),
    Layer.provideMerge(layerMigratedSql(choice)),
    Layer.orDie
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
        Effect.succeed(HttpServerResponse.jsonUnsafe({
          data: null,
          error: { code: "unavailable", message: "The database does not answer" }
        }, { status: 503 }))
      )
    )
  )
}))

const ApiHandlers = Layer.mergeAll(
  LocationsHandlers,
  ExpensesHandlers,
  ContractsHandlers,
  ObligationsHandlers,
  OrganizationHandlers,
  DeliveryRoutesHandlers,
  CostingSettingsHandlers,
  AppsHandlers,
  WebhooksHandlers
)

type AppRoutesRequire =
  | HttpRouter.HttpRouter
  | CoreLive
  | Etag.Generator
  | FileSystem.FileSystem
  | HttpPlatform.HttpPlatform
  | Path.Path

/** Every route the server answers: /v1, its OpenAPI document, the docs page, health checks, OAuth. */
export const AppRoutes: Layer.Layer<never, never, AppRoutesRequire> = Layer.mergeAll(
  HttpApiBuilder.layer(Api, { openapiPath: "/v1/openapi.json" }).pipe(
    Layer.provide(ApiHandlers),
    Layer.provide([AuthenticationLive, SchemaErrorsLive, IdempotencyLive])
  ),
  HttpApiSwagger.layer(Api, { path: "/docs" }),
  SystemRoutes,
  OAuthRoutes
)
