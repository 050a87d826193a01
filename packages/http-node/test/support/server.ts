import { type Clock as ClockNs, Clock, Context, Effect, Exit, Layer, Option, References, Scope } from "effect"
import { HttpServer } from "effect/http"
import { FastHashing, makeFixture, type Fixture } from "@opsplatform/testing"
import type { DatabaseChoice } from "../../src/server/database.ts"
import { testConfiguration } from "./config.ts"
import { serverLayer } from "../../src/server/serve.ts"
import { MetricsListener } from "../../src/server/observability.ts"

export interface TestServer {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  readonly url: string
  /** The metrics listener's port, when `OPSPLATFORM_METRICS_PORT` was set. */
  readonly metricsPort: number | undefined
  /** Runs an effect against the server's own services (to seed data or inspect the store). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
  readonly close: () => Promise<void>
}

/**
 * The real server (Node HTTP, real middleware, real SQL) on a free loopback
 * port, built from the same layers `opsplatform serve` uses.
 */
export const startTestServer = async (
  database: DatabaseChoice,
  options: {
    readonly background?: boolean
    /** Variables the server reads as configuration, over the test file's (`configureTests`). */
    readonly env?: Record<string, string>
    /** The server's clock, for tests that move time (e.g. `shiftedClock`). */
    readonly clock?: ClockNs.Clock
    /** Cheap PIN and password hashing, for tests that check many PINs (the format and the checks stay the same). */
    readonly fastHashing?: boolean
  } = {}
): Promise<TestServer> => {
  const scope = Effect.runSync(Scope.make())
  const layer = serverLayer({ port: 0, host: "127.0.0.1", database, background: options.background ?? false }).pipe(
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )
  const context = await Effect.runPromise(
    Layer.buildWithScope(
      layer.pipe(
        Layer.provide(testConfiguration(options.env)),
        options.clock === undefined ? (l) => l : Layer.provide(Layer.succeed(Clock.Clock, options.clock)),
        options.fastHashing === true ? Layer.provide(FastHashing) : (l) => l
      ),
      scope
    )
  ).catch(async (cause) => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw cause
  })
  const server = Context.get(context, HttpServer.HttpServer)
  const address = server.address as { readonly port: number }
  return {
    url: `http://127.0.0.1:${address.port}`,
    metricsPort: Option.getOrUndefined(Option.map(Context.getOption(context, MetricsListener), (l) => l.port)),
    run: (effect) => Effect.runPromise(Effect.provideContext(effect, context as any)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** The real clock plus an offset the test moves forward: time passes for the server without waiting. */
export const shiftedClock = () => {
  const base = Effect.runSync(Clock.clockWith(Effect.succeed))
  let offsetMs = 0
  const now = () => base.currentTimeMillisUnsafe() + offsetMs
  const clock: ClockNs.Clock = {
    currentTimeMillisUnsafe: now,
    currentTimeMillis: Effect.sync(now),
    currentTimeNanosUnsafe: () => base.currentTimeNanosUnsafe() + BigInt(offsetMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => base.currentTimeNanosUnsafe() + BigInt(offsetMs) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => base.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: base.monotonicTimeNanos,
    sleep: (duration) => base.sleep(duration)
  }
  return {
    clock,
    advance: (ms: number) => {
      offsetMs += ms
    }
  }
}

/** A fresh organization with credentials of every kind, made through the server's services. */
export const seedFixture = (server: TestServer, name?: string): Promise<Fixture> => server.run(makeFixture(name))

/** fetch with a bearer token and a JSON body; returns status, headers and the parsed body. */
export const call = async (
  server: TestServer,
  method: string,
  path: string,
  options: { readonly token?: string | undefined; readonly body?: unknown; readonly rawBody?: string; readonly headers?: Record<string, string> } = {}
) => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  let body: string | undefined
  if (options.rawBody !== undefined) body = options.rawBody
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${server.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) })
  const text = await response.text()
  let json: any = undefined
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, json, text }
}
