import { type Context, Effect, Exit, Layer, References, Scope } from "effect"
import { coreLive, type CoreLive } from "../../src/server/app.ts"
import type { DatabaseChoice } from "../../src/server/database.ts"
import { testConfiguration } from "./config.ts"
import { postgresUrl } from "./databases.ts"

/**
 * Core on its own connection pool in this process, as another host would run
 * it (no HTTP server); `env` adds to the test file's configuration. Closed
 * with `close`.
 */
export const openCore = async (choice: DatabaseChoice, env?: Record<string, string>) => {
  const scope = Effect.runSync(Scope.make())
  const context: Context.Context<CoreLive> = await Effect.runPromise(Layer.buildWithScope(
    coreLive(choice).pipe(
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      Layer.provide(testConfiguration(env))
    ),
    scope
  ))
  return {
    context,
    run: <A, E>(effect: Effect.Effect<A, E, CoreLive>) => Effect.runPromise(Effect.provideContext(effect, context)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/**
 * Core on the PostgreSQL of DATABASE_URL in the test's own process, beside the
 * processes a test spawns: to seed their data and read what they wrote.
 */
export const startPostgresCore = () => openCore({ _tag: "Postgres", url: postgresUrl()!, maxConnections: 2 })
