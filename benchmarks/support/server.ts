import { ConfigProvider, Context, Effect, Exit, Layer, References, Scope } from "effect"
import { HttpServer } from "effect/http"
import { coreLive } from "../../packages/http-node/src/server/app.ts"
import { databaseChoiceFromEnv } from "../../packages/http-node/src/config/Configuration.ts"
import { serverLayer } from "../../packages/http-node/src/server/serve.ts"

/**
 * The real server on a free loopback port for a benchmark: PostgreSQL when
 * DATABASE_URL is set, otherwise an in-memory PGlite. `env` overrides the
 * configuration the server reads from the environment.
 */
export const startBenchServer = async (env?: Record<string, string>, extra: Layer.Layer<never> = Layer.empty) => {
  // Webhook secrets are sealed under the operator key on PostgreSQL; a benchmark database takes any.
  process.env.OPSPLATFORM_SECRET_KEY ??= "0".repeat(64)
  const configured = databaseChoiceFromEnv({ ...process.env, ...env })
  const database = configured._tag === "Postgres" ? { ...configured, maxConnections: 10 } : { _tag: "EmbeddedMemory" as const }
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(
      serverLayer({ port: 0, host: "127.0.0.1", database, background: false }).pipe(
        Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
        Layer.provide(extra),
        Layer.provide(
          env === undefined
            ? Layer.empty
            : ConfigProvider.layer(ConfigProvider.fromEnv({ env: { ...process.env, ...env } as Record<string, string> }))
        )
      ),
      scope
    )
  )
  return {
    database,
    context,
    port: (Context.get(context, HttpServer.HttpServer).address as { port: number }).port,
    run: <A, E>(effect: Effect.Effect<A, E, any>) => Effect.runPromise(Effect.provideContext(effect, context as any)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** One JSON request to a server on loopback with a bearer token; its `data`, or an error naming the answer. */
export const callApi = async (port: number, token: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const json = await res.json() as any
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`)
  return json.data
}
