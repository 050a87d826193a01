import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CoreLayers, Ids } from "@opsplatform/core"
import { storageConformance } from "@opsplatform/testing/conformance"
import { CryptoLive } from "../src/server/app.ts"
import { layerMigratedSql } from "../src/server/database.ts"
import { testDatabases } from "./support/databases.ts"

for (const db of testDatabases()) {
  storageConformance(
    db.name,
    CoreLayers.SqlStorage.pipe(
      Layer.provideMerge(Ids.Ids.layer),
      Layer.provideMerge(CryptoLive),
      Layer.provideMerge(layerMigratedSql(db.choice()))
    ),
    (organizationId, eventId) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`SELECT count(*)::int AS n FROM outbox_events
          WHERE organization_id = ${organizationId} AND event_id = ${eventId}`
        return Number((rows[0] as any).n)
      }) as any
  )
}
