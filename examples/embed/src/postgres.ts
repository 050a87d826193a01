/**
 * The same domain on PostgreSQL: core's SQL storage over an `@effect/sql-pg`
 * client, its migrations applied at start, Node's crypto, and an operator key
 * for the secrets core seals (webhook signing secrets).
 *
 *     DATABASE_URL=postgres://… OPSPLATFORM_SECRET_KEY=$(openssl rand -base64 32) npm run postgres
 */
import { NodeCrypto } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { CoreLayers, Ids, Migrations, SecretBox, WebhookTransport } from "@opsplatform/core"
import { useCore } from "./program.ts"

export const coreOnPostgres = (options: { readonly url: string; readonly operatorKey: Uint8Array; readonly maxConnections?: number }) => {
  const sql = PgClient.layer({ url: Redacted.make(options.url), maxConnections: options.maxConnections ?? 10 })
  const crypto = Layer.mergeAll(NodeCrypto.layerDigest, NodeCrypto.layerKdf, NodeCrypto.layerSecureRandom, NodeCrypto.layerAead, NodeCrypto.layerMac, NodeCrypto.layerSignature)
  return CoreLayers.Services.pipe(
    Layer.provideMerge(CoreLayers.SqlStorage),
    Layer.provideMerge(SecretBox.SecretBox.layer(options.operatorKey)),
    // This host sends no webhooks; the Node server's transport is in @opsplatform/http-node.
    Layer.provideMerge(WebhookTransport.WebhookTransport.layerOffline),
    Layer.provideMerge(Ids.Ids.layer),
    Layer.provideMerge(crypto),
    Layer.provideMerge(Layer.effectDiscard(Effect.orDie(Migrations.migrate)).pipe(Layer.provideMerge(sql))),
    Layer.orDie
  )
}

export const programOn = (options: Parameters<typeof coreOnPostgres>[0]) => useCore.pipe(Effect.provide(coreOnPostgres(options)))

if (import.meta.url === `file://${process.argv[1]}`) {
  const key = Buffer.from(process.env.OPSPLATFORM_SECRET_KEY ?? "", "base64")
  if (!process.env.DATABASE_URL || key.length !== 32) {
    console.error("Set DATABASE_URL and OPSPLATFORM_SECRET_KEY (32 bytes as base64: openssl rand -base64 32)")
    process.exit(1)
  }
  Effect.runPromise(programOn({ url: process.env.DATABASE_URL, operatorKey: new Uint8Array(key) }))
    .then((result) => console.log(JSON.stringify(result, null, 2)))
}
