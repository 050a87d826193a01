import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { onPostgres, databaseUrl } from "@opsplatform/testing/harness/databases"
import { freePort } from "./cli.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's private PostgreSQL (see `startPrivatePostgres`), started by the global setup. */
    privatePostgres: PrivatePostgresServer
  }
}

/** Where the run's private PostgreSQL lives: enough for a test file to stop and start it. */
export interface PrivatePostgresServer {
  readonly url: string
  readonly dir: string
  readonly data: string
  readonly options: string
}

/**
 * A PostgreSQL server of the tests' own (initdb + pg_ctl into a temporary
 * directory), which a test may stop and start at will — what no shared
 * DATABASE_URL allows. The server binaries must be installed
 * (`scripts/ensure-postgres.sh` installs them); without them the global setup
 * throws, so the tests that need it fail loudly instead of skipping.
 */
export interface PrivatePostgres {
  readonly url: string
  readonly start: () => void
  /** Stops the server (`-m fast`: open sessions are terminated, as a failover or a restart does). */
  readonly stop: () => void
  /** Drops the test's database (starting the server again if the test left it stopped). */
  readonly destroy: () => Promise<void>
}

/** The directory of the newest installed PostgreSQL server binaries. */
export const postgresBinaries = (): string => {
  const root = "/usr/lib/postgresql"
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a))
    : []
  if (versions.length === 0) {
    throw new Error(
      "PostgreSQL server binaries (initdb, pg_ctl) are missing under /usr/lib/postgresql/*/bin: run `bash scripts/ensure-postgres.sh`"
    )
  }
  return path.join(root, versions[0]!, "bin")
}

/** Runs a server tool (initdb, pg_ctl) as the user PostgreSQL accepts: as root, the postgres user. */
const tool = (dir: string, name: string, args: ReadonlyArray<string>) => {
  const file = path.join(postgresBinaries(), name)
  return process.getuid?.() === 0 ? { file: "runuser", args: ["-u", "postgres", "--", file, ...args], cwd: dir } : { file, args: [...args], cwd: dir }
}
const runSync = (dir: string, name: string, args: ReadonlyArray<string>) => {
  const t = tool(dir, name, args)
  execFileSync(t.file, t.args, { stdio: "pipe", cwd: t.cwd })
}
const run = (dir: string, name: string, args: ReadonlyArray<string>) => {
  const t = tool(dir, name, args)
  return promisify(execFile)(t.file, t.args, { cwd: t.cwd }).then(() => undefined)
}

/**
 * Starts the run's private PostgreSQL (in the global setup, once): initdb into
 * a temporary directory and pg_ctl start. The returned `stop` destroys it.
 */
export const startPrivatePostgres = async (): Promise<{ readonly server: PrivatePostgresServer; readonly destroy: () => Promise<void> }> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-pg-"))
  const data = path.join(dir, "data")
  // PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres:postgres", dir])
  await run(dir, "initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=50`
  await run(dir, "pg_ctl", ["-D", data, "-o", options, "-l", path.join(dir, "log"), "-w", "-t", "60", "start"])
  return {
    server: { url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir, data, options },
    destroy: async () => {
      await run(dir, "pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "60", "stop"]).catch(() => undefined)
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/**
 * The run's private PostgreSQL for one test: a database of the test's own on
 * it (`url`), and the server's stop and start. The server is shared by the
 * run but only the fault tests use it, one file, so stopping it disturbs
 * nobody else.
 */
export const privatePostgres = async (server: PrivatePostgresServer): Promise<PrivatePostgres> => {
  const name = `faults_${process.pid}_${Date.now()}`
  await onPostgres(server.url, [`CREATE DATABASE ${name}`])
  const start = () => runSync(server.dir, "pg_ctl", ["-D", server.data, "-o", server.options, "-l", path.join(server.dir, "log"), "-w", "-t", "60", "start"])
  const stop = () => runSync(server.dir, "pg_ctl", ["-D", server.data, "-m", "fast", "-w", "-t", "60", "stop"])
  return {
    url: databaseUrl(server.url, name),
    start,
    stop,
    destroy: async () => {
      try {
        start()
      } catch {
        // already running
      }
      await onPostgres(server.url, [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`])
    }
  }
}
