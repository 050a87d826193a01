import { ConfigProvider, Context, Effect, Exit, Layer, References, Scope } from "effect"
import { HttpServer } from "effect/http"
import { coreLive } from "../../packages/http-node/src/server/app.ts"
import { serverLayer } from "../../packages/http-node/src/server/serve.ts"

/**
 * The real server on a free loopback port for a benchmark: PostgreSQL when
 * DATABASE_URL is set, otherwise an in-memory PGlite. `env` overrides the
 * configuration the server reads from the environment.
 */
export const startBenchServer = async (env?: Record<string, string>, extra: Layer.Layer<never> = Layer.empty) => {
  const database = process.env.DATABASE_URL
    ? { _tag: "Postgres" as const, url: process.env.DATABASE_URL, maxConnections: 10 }
    : { _tag: "EmbeddedMemory" as const }
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
