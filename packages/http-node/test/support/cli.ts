import { NodeServices } from "@effect/platform-node"
import { ConfigProvider, Console, Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { format } from "node:util"
import { CliProcess } from "../../src/cli/process.ts"
import { runOpsplatform } from "../../src/cli/run.ts"
import { LoggingLive } from "../../src/server/logging.ts"
import { testVariables } from "./config.ts"

export const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/opsplatform.js")
const builtEntry = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/cli/main.js")

/** The CLI runs from the build (as `npx opsplatform` does); the root `npm test` builds first. */
export const assertBuilt = () => {
  if (!fs.existsSync(builtEntry)) throw new Error(`${builtEntry} is missing: run \`npm run build\` first`)
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** This process's environment, the test file's configuration and `env` over them; `undefined` removes a variable. */
const environment = (env: Record<string, string | undefined>): NodeJS.ProcessEnv => {
  const merged: Record<string, string | undefined> = { ...process.env, ...testVariables(), ...env }
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k]
  return merged
}

/**
 * Runs `opsplatform <args>` to completion inside this test process: the same
 * command, parsing, output and exit status as the binary, without starting
 * Node and loading the server for each call. `env` is the command's
 * environment over this process's (`undefined` removes a variable), `input`
 * its stdin. What only a process shows (the binary itself, signals, two
 * processes on one database) is tested with `runCli`.
 */
export const runCommand = async (
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined> = {},
  input?: string
): Promise<CliResult> => {
  const merged = environment(env)
  let stdout = ""
  let stderr = ""
  let code = 0
  const output: Console.Console = Object.assign(Object.create(console), {
    log: (...parts: ReadonlyArray<unknown>) => (stdout += format(...parts) + "\n"),
    info: (...parts: ReadonlyArray<unknown>) => (stdout += format(...parts) + "\n"),
    error: (...parts: ReadonlyArray<unknown>) => (stderr += format(...parts) + "\n"),
    warn: (...parts: ReadonlyArray<unknown>) => (stderr += format(...parts) + "\n")
  })
  await Effect.runPromise(runOpsplatform(args).pipe(
    Effect.provideService(CliProcess, {
      env: merged,
      readStdin: () => input ?? "",
      fail: () => {
        code = 1
      }
    }),
    Effect.provideService(Console.Console, output),
    Effect.provide(Layer.mergeAll(NodeServices.layer, LoggingLive)),
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: merged as Record<string, string> })))
  ))
  return { code, stdout, stderr }
}

/** Runs `opsplatform <args>` to completion with the given environment, and `input` on stdin when given. */
export const runCli = (args: ReadonlyArray<string>, env: Record<string, string | undefined>, input?: string): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, ...testVariables(), ...env },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    if (input !== undefined) child.stdin!.end(input)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

export interface Serving {
  readonly child: ChildProcess
  readonly url: string
  /** What `serve` printed on stdout so far. */
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<number | null>
}

/** Starts `opsplatform serve` and resolves once it logs that it listens. */
export const startServe = (port: number, env: Record<string, string | undefined>): Promise<Serving> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "serve", "--port", String(port), "--host", "127.0.0.1"], {
      env: { ...process.env, ...testVariables(), ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)))
    const timer = setTimeout(() => reject(new Error(`serve did not start in time:\n${stderr}`)), 90_000)
    child.stdout!.on("data", (d) => (stdout += d))
    child.stderr!.on("data", (d) => {
      stderr += d
      if (stderr.includes(`"message":"listening"`)) {
        clearTimeout(timer)
        resolve({ child, url: `http://127.0.0.1:${port}`, stdout: () => stdout, stderr: () => stderr, exited })
      }
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited with ${code}:\n${stderr}`))
    })
  })

/** `opsplatform worker` as its own process, resolved once it logs `ready` (e.g. "usage forwarder started"). */
export const spawnWorker = (
  env: Record<string, string | undefined>,
  ready: string
): Promise<{ child: ChildProcess; stderr: () => string; exited: Promise<number | null> }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "worker"], {
      env: { ...process.env, ...testVariables(), ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)))
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${stderr}`)), 60_000)
    child.stderr!.on("data", (d) => {
      stderr += d
      if (stderr.includes(ready)) {
        clearTimeout(timer)
        resolve({ child, stderr: () => stderr, exited })
      }
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      reject(new Error(`worker exited with ${code}:\n${stderr}`))
    })
  })

export { freePort } from "./ports.ts"

/**
 * Resolves once nothing listens on the loopback port any more (a connection is
 * refused): a server that began its graceful shutdown has closed its listener.
 */
export const listenerClosed = async (port: number): Promise<void> => {
  const net = await import("node:net")
  const refused = () =>
    new Promise<boolean>((resolve) => {
      const probe = net.connect(port, "127.0.0.1")
      probe.once("connect", () => {
        probe.destroy()
        resolve(false)
      })
      probe.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"))
    })
  while (!(await refused())) await new Promise((r) => setTimeout(r, 10))
}
