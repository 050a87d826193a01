import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { Migrations } from "@opsplatform/core"
import type { DatabaseChoice } from "../config/Configuration.ts"
import { DEFAULT_POOL_SIZE } from "../config/variables.ts"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Connections to the embedded server. PGlite is one session, and its socket
 * server interleaves the protocol messages of concurrent connections (outside a
 * transaction, and around the BEGIN that opens one), so statements of two
 * connections can run each other's portals. One connection carries everything;
 * the client pipelines concurrent queries on it and serializes transactions.
 */
const EMBEDDED_CONNECTIONS = 1

/**
 * The client pool on the embedded database holds one connection. PGlite is a
 * single session and its socket server interleaves the protocol messages of
 * concurrent connections outside a transaction, so two connections can clobber
 * each other's unnamed portal ("portal does not exist"). One connection makes
 * every statement and transaction take its turn, which is what PGlite does anyway.
 */
const EMBEDDED_POOL = 1

export type { DatabaseChoice } from "../config/Configuration.ts"


/**
 * PGlite is one PostgreSQL session; the socket server exposes it on loopback so
 * the same `@effect/sql-pg` client and SQL serve both storage choices.
 */
const embeddedServer = (open: () => Promise<PGlite>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const db = await open()
      const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: EMBEDDED_CONNECTIONS })
      await server.start()
      const address = (server as unknown as { server: { address(): { port: number } } }).server.address()
      return { db, server, port: address.port }
    }),
    ({ db, server }) => Effect.promise(async () => {
      await server.stop()
      await db.close()
    })
  )

const pgliteDataDir = (dataDir: string) => path.join(dataDir, "pglite")

export class EmbeddedDatabaseBusy extends Error {
  constructor(readonly dataDir: string, readonly pid: number) {
    super(
      `The embedded database in ${dataDir} is in use by process ${pid}. PGlite serves one process: stop that process ` +
        `first, or run PostgreSQL and set DATABASE_URL.`
    )
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The other live process that holds an embedded data directory, if any. */
export const embeddedHolder = (dataDir: string): number | undefined => {
  let holder: number
  try {
    holder = Number(fs.readFileSync(path.join(dataDir, "opsplatform.pid"), "utf8"))
  } catch {
    return undefined
  }
  return holder !== process.pid && Number.isInteger(holder) && holder > 0 && isAlive(holder) ? holder : undefined
}

/** One process at a time may open an embedded data directory. */
const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        fs.mkdirSync(dataDir, { recursive: true })
        const file = path.join(dataDir, "opsplatform.pid")
        try {
          fs.writeFileSync(file, String(process.pid), { flag: "wx" })
        } catch {
          const holder = embeddedHolder(dataDir)
          if (holder !== undefined) throw new EmbeddedDatabaseBusy(dataDir, holder)
          fs.writeFileSync(file, String(process.pid))
        }
        return file
      },
      catch: (e) => e as Error
    }),
    (file) => Effect.sync(() => fs.rmSync(file, { force: true }))
  )

export const layerSql = (choice: DatabaseChoice): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, SqlError> => {
  switch (choice._tag) {
    case "Postgres":
      return PgClient.layer({
        url: Redacted.make(choice.url),
        maxConnections: choice.maxConnections ?? DEFAULT_POOL_SIZE,
        applicationName: "opsplatform",
        // Every statement here is a short indexed read or write; JIT compiling one costs more than it saves
        // (decided: docs/decisions.md, "Lists at a million rows").
        startupParameters: { jit: "off" }
      })
    case "Embedded":
    case "EmbeddedFromDump":
    case "EmbeddedMemory":
      return Layer.unwrap(
        Effect.map(
          Effect.andThen(
            choice._tag === "Embedded" ? Effect.orDie(lockDataDir(choice.dataDir)) : Effect.void,
            embeddedServer(() =>
              choice._tag === "EmbeddedFromDump"
                ? PGlite.create({ loadDataDir: choice.dump })
                : choice._tag === "EmbeddedMemory"
                ? PGlite.create("memory://")
                : PGlite.create(pgliteDataDir(choice.dataDir))
            )
          ),
          ({ port }) =>
            PgClient.layer({
              host: "127.0.0.1",
              port,
              username: "postgres",
              database: "postgres",
              maxConnections: EMBEDDED_POOL,
              applicationName: "opsplatform"
            })
        )
      )
  }
}

/** The SQL client with every migration applied. */
export const layerMigratedSql = (choice: DatabaseChoice) =>
  Layer.effectDiscard(Effect.orDie(Migrations.migrate)).pipe(Layer.provideMerge(layerSql(choice)))
