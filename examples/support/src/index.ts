/**
 * What the examples' tests (and the client's) share: the real server in
 * process on a free loopback port, the opsplatform CLI as a child process,
 * and the database both use — PostgreSQL when DATABASE_URL is set, otherwise
 * an embedded database loaded from the migrated template the run's global setup made (`@opsplatform/testing/harness/databases`).
 */
import { PGlite } from "@electric-sql/pglite"
import { ConfigProvider, Context, Effect, Exit, Layer, References, Scope } from "effect"
import { HttpServer } from "effect/http"
import { type DatabaseChoice, serverLayer } from "@opsplatform/http-node"
import { type Fixture, makeFixture } from "@opsplatform/testing"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { inject } from "vitest"
import type {} from "@opsplatform/testing/harness/databases"

export type { Fixture } from "@opsplatform/testing"

/** PostgreSQL when DATABASE_URL is set, otherwise a fresh embedded database from the template. */
export const database = (): DatabaseChoice =>
  process.env.DATABASE_URL
    ? { _tag: "Postgres", url: process.env.DATABASE_URL, maxConnections: 4 }
    : { _tag: "EmbeddedFromDump", dump: new Blob([fs.readFileSync(inject("pgliteTemplate"))]) }

export interface RunningServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234. */
  readonly url: string
  /** A fresh organization with a member and credentials of every kind (`tokens.api`: live, every scope). */
  readonly seed: (name?: string) => Promise<Fixture>
  /** Runs an effect against the server's own services. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
  readonly close: () => Promise<void>
}

/**
 * The server `opsplatform serve` runs (HTTP, background jobs, database), in
 * this process on a free loopback port. Configuration comes from the
 * environment, as the CLI's does, with `env` over it.
 */
export const startServer = async (
  options: { readonly background?: boolean; readonly database?: DatabaseChoice; readonly env?: Readonly<Record<string, string>> } = {}
): Promise<RunningServer> => {
  const scope = Effect.runSync(Scope.make())
  const layer = serverLayer({ port: 0, host: "127.0.0.1", database: options.database ?? database(), background: options.background ?? true }).pipe(
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { ...process.env, ...options.env } as Record<string, string> })))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope)).catch(async (cause) => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw cause
  })
  const { port } = Context.get(context, HttpServer.HttpServer).address as { readonly port: number }
  const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.runPromise(Effect.provideContext(effect, context as Context.Context<any>))
  return {
    url: `http://127.0.0.1:${port}`,
    seed: (name) => run(makeFixture(name)),
    run,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** The `opsplatform` binary of the installed @opsplatform/http-node. */
export const bin = path.join(path.dirname(createRequire(import.meta.url).resolve("@opsplatform/http-node/package.json")), "bin/opsplatform.js")

/** A new embedded data directory holding the migrated template, for the CLI (`OPSPLATFORM_DATA_DIR`). */
export const embeddedDataDir = async (): Promise<string> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-example-"))
  const db = await PGlite.create(path.join(dir, "pglite"), { loadDataDir: new Blob([fs.readFileSync(inject("pgliteTemplate"))]) })
  await db.close()
  return dir
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `opsplatform <args>` to completion; `env` is added to this process's environment (`undefined` removes a variable). */
export const opsplatform = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: environment(env), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** The last JSON line a command printed. */
export const lastJson = (output: string): any => JSON.parse(output.trim().split("\n").filter((l) => l.startsWith("{") || l.startsWith("[")).pop()!)

const environment = (env: Record<string, string | undefined>) => {
  const merged: Record<string, string | undefined> = { ...process.env, ...env }
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k]
  return merged as NodeJS.ProcessEnv
}

export interface Process {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the first stdout line that matches, or rejects when the process exits first. */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>
  readonly stop: () => Promise<void>
}

/** Starts a long-running process (a server, an example's receiver) and keeps its output. */
export const start = (command: string, args: ReadonlyArray<string>, options: { readonly cwd?: string; readonly env?: Record<string, string | undefined> } = {}): Process => {
  // A process group of its own: `npm start` runs node under npm, and stopping the group stops both.
  const child = spawn(command, args, { cwd: options.cwd, env: environment(options.env ?? {}), stdio: ["ignore", "pipe", "pipe"], detached: true })
  let stdout = ""
  let stderr = ""
  const listeners = new Set<() => void>()
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()))
  child.stdout!.on("data", (d) => {
    stdout += d
    for (const l of listeners) l()
  })
  child.stderr!.on("data", (d) => {
    stderr += d
    for (const l of listeners) l()
  })
  child.on("close", () => {
    for (const l of listeners) l()
  })
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: (pattern, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const line = (stdout + stderr).split("\n").find((l) => pattern.test(l))
          if (line !== undefined) {
            cleanup()
            resolve(line)
          } else if (child.exitCode !== null || child.signalCode !== null) {
            cleanup()
            reject(new Error(`${command} ${args.join(" ")} exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}:\n${stdout}\n${stderr}`))
          }
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`${command} ${args.join(" ")} did not print ${pattern} within ${timeoutMs} ms:\n${stdout}\n${stderr}`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          listeners.delete(check)
        }
        listeners.add(check)
        check()
      }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGTERM")
      await exited
    }
  }
}

/** A free TCP port on loopback. */
export const freePort = async (): Promise<number> => {
  const net = await import("node:net")
  return new Promise((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

export interface SendingPlatform {
  readonly server: RunningServer
  readonly fixture: Fixture
  /** Subscribes a receiver at `http://127.0.0.1:<a free port>/webhooks/opsplatform`; the answer carries its secret. */
  readonly subscribe: (eventTypes: Array<string>) => Promise<{ readonly port: number; readonly url: string; readonly subscription: { readonly id: string; readonly secret: string } }>
  readonly close: () => Promise<void>
}

/** A running server that delivers webhooks to receivers on loopback (the operator's opt-in), and an organization to send from. */
export const startSendingPlatform = async (name: string): Promise<SendingPlatform> => {
  const server = await startServer({ background: true, env: { OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE: "true" } })
  const fixture = await server.seed(name)
  return {
    server,
    fixture,
    subscribe: async (eventTypes) => {
      const port = await freePort()
      const url = `http://127.0.0.1:${port}/webhooks/opsplatform`
      // With the sandbox key: plain http receivers are accepted in the sandbox.
      const response = await fetch(`${server.url}/v1/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${fixture.tokens.sandbox}`, "content-type": "application/json" },
        body: JSON.stringify({ url, event_types: eventTypes })
      })
      if (response.status !== 201) throw new Error(`POST /v1/webhooks answered ${response.status}: ${await response.text()}`)
      return { port, url, subscription: ((await response.json()) as { data: { id: string; secret: string } }).data }
    },
    close: () => server.close()
  }
}
