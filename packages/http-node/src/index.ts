/**
 * `@opsplatform/http-node`: the Operations Platform's /v1 API, OAuth server and
 * health checks on Node, over PostgreSQL or an embedded PGlite database.
 *
 * Everything a host needs to run or mount the server is here; the `opsplatform`
 * CLI (`serve`, `worker`, `migrate`, `admin`, `jobs`) is the package's `bin`.
 * Modules not re-exported below are internal and may change without notice.
 */

// The /v1 API definition: typed clients (`HttpApiClient.make(Api)`) and the OpenAPI document derive from it.
export { Api } from "./api/Api.ts"

// Every route the server answers (/v1, /v1/openapi.json, /docs, /healthz, /readyz, OAuth), over the services of `coreLive`.
export { AppRoutes } from "./server/app.ts"

// The request wrapper the server runs `AppRoutes` behind (request ids, envelopes for refusals, body limit, request log).
export { apiMiddleware } from "./server/middleware.ts"

// Core services on SQL storage with migrations applied, and the services that layer provides.
export { type CoreLive, coreLive } from "./server/app.ts"

// Which database to use: PostgreSQL, an embedded data directory, or an in-memory embedded database.
export { databaseChoiceFromEnv } from "./config/Configuration.ts"
export type { DatabaseChoice } from "./server/database.ts"

// The API as a Fetch handler (`(Request) => Promise<Response>`), for a host that mounts it in its own server.
export { makeWebHandler } from "./server/webHandler.ts"

// The whole Node server as a layer (HTTP listener, background jobs, database), as `opsplatform serve` runs it.
export { type ServeOptions, serverLayer } from "./server/serve.ts"
