import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { freePort } from "./cli.ts"

/**
 * A PostgreSQL server of the test's own (initdb + pg_ctl into a temporary
 * directory), which the test may stop and start at will — what no shared
 * DATABASE_URL allows. The server binaries must be installed
 * (`scripts/ensure-postgres.sh` installs them); without them this throws,
 * so the tests that need it fail loudly instead of skipping.
 */
export interface PrivatePostgres {
  readonly url: string
  readonly start: () => void
  /** Stops the server (`-m fast`: open sessions are terminated, as a failover or a restart does). */
  readonly stop: () => void
  readonly destroy: () => void
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

export const startPrivatePostgres = async (): Promise<PrivatePostgres> => {
  const bin = postgresBinaries()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-pg-"))
  const data = path.join(dir, "data")
  // PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
  const asRoot = process.getuid?.() === 0
  if (asRoot) execFileSync("chown", ["postgres:postgres", dir])
  const run = (tool: string, args: ReadonlyArray<string>) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", path.join(bin, tool), ...args], { stdio: "pipe", cwd: dir })
      : execFileSync(path.join(bin, tool), args, { stdio: "pipe", cwd: dir })
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=50`
  const start = () => {
    run("pg_ctl", ["-D", data, "-o", options, "-l", path.join(dir, "log"), "-w", "-t", "60", "start"])
  }
  const stop = () => {
    run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"])
  }
  start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    destroy: () => {
      try {
        stop()
      } catch {
        // already stopped
      }
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}
