import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { CoreLayers, Ids } from "@opsplatform/core"
import { webhookStorageConformance } from "@opsplatform/testing/conformance"
import { CryptoLive } from "../src/server/app.ts"
import type { DatabaseChoice } from "../src/server/database.ts"
import { layerMigratedSql } from "../src/server/database.ts"
import { testDatabases } from "./support/databases.ts"

/**
 * Claims are global, as workers are, so the contract runs where no worker of
 * another test file can take its deliveries: PGlite is private to this file,
 * and on PostgreSQL a schema of its own holds a freshly migrated copy.
 */
const isolated = (db: ReturnType<typeof testDatabases>[number]): DatabaseChoice => {
  const choice = db.choice()
  if (choice._tag !== "Postgres") return choice
  const schema = `webhooks_conformance_${process.pid}_${Date.now()}`
  const url = new URL(choice.url)
  url.searchParams.set("options", `-c search_path=${schema}`)
  return { ...choice, url: url.toString(), schema } as DatabaseChoice & { schema: string }
}

for (const db of testDatabases()) {
  const choice = isolated(db)
  // The schema exists before the migrations run, and goes with everything in it afterwards.
  const withSchema = (statement: string) =>
    Effect.flatMap(PgClient.PgClient, (sql) => sql.unsafe(statement)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(process.env.DATABASE_URL!), maxConnections: 1 })),
      Effect.orDie
    )
  const prepare = "schema" in choice
    ? Layer.effectDiscard(Effect.acquireRelease(
      withSchema(`CREATE SCHEMA IF NOT EXISTS ${(choice as any).schema}`),
      () => withSchema(`DROP SCHEMA IF EXISTS ${(choice as any).schema} CASCADE`)
    ))
    : Layer.empty
  webhookStorageConformance(
    db.name,
    CoreLayers.SqlStorage.pipe(
      Layer.provideMerge(Ids.Ids.layer),
      Layer.provideMerge(CryptoLive),
      Layer.provideMerge(layerMigratedSql(choice)),
      Layer.provide(prepare)
    )
  )
}
