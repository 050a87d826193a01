import { Effect, Exit, Layer, References, Scope } from "effect"
import { coreLive } from "../../packages/http-node/src/server/app.ts"

/**
 * Core in this process for a benchmark (every service on SQL, no HTTP):
 * PostgreSQL when DATABASE_URL is set, otherwise an in-memory PGlite.
 */
export const openBenchCore = async () => {
  const database = process.env.DATABASE_URL
    ? { _tag: "Postgres" as const, url: process.env.DATABASE_URL, maxConnections: 4 }
    : { _tag: "EmbeddedMemory" as const }
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(
    coreLive(database).pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))),
    scope
  ))
  return {
    database,
    scope,
    run: <A, E>(effect: Effect.Effect<A, E, any>) =>
      Effect.runPromise(
        Effect.provideContext(effect, context as any).pipe(Effect.provideService(References.MinimumLogLevel, "Warn"))
      ) as Promise<A>,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
