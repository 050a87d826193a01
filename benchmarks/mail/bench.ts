/**
 * One mail sync of N new inbox messages against what it cannot avoid: reading the same
 * messages' headers from the same Dovecot over one imapflow session (UID SEARCH, then
 * FETCH of envelope, flags, INTERNALDATE, size, BODYSTRUCTURE and the delivery headers),
 * with no database at all. The sync adds the lease, the identities, the stored rows, the
 * `email.received` events and their webhook deliveries (one subscription) in one transaction.
 *
 *   DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/mail/bench.ts
 *   (without DATABASE_URL it uses an in-memory PGlite; Dovecot as `npm test` installs it)
 */
import { Effect, Exit, Layer, References, Scope } from "effect"
import { ImapFlow } from "imapflow"
import { Mailboxes, MailSync, Tenancy, Webhooks } from "@opsplatform/core"
import { coreLive } from "../../packages/http-node/src/server/app.ts"
import { MESSAGE_QUERY } from "../../packages/http-node/src/server/imapMailSource.ts"
import { MailSyncLive } from "../../packages/http-node/src/server/jobs/mail.ts"
import { rawMessage, startDovecot } from "../../packages/http-node/test/support/dovecot.ts"

process.env.OPSPLATFORM_MAIL_ALLOW_PRIVATE = "true"
process.env.OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE = "true"
// A throwaway operator key for the sealed credential, never a real one.
process.env.OPSPLATFORM_SECRET_KEY ??= "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
const messages = Number(process.env.BENCH_MESSAGES ?? 500)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const database = process.env.DATABASE_URL
  ? { _tag: "Postgres" as const, url: process.env.DATABASE_URL, maxConnections: 4 }
  : { _tag: "EmbeddedMemory" as const }

const dovecot = await startDovecot()
const scope = Effect.runSync(Scope.make())
const context = await Effect.runPromise(Layer.buildWithScope(
  MailSyncLive.pipe(Layer.provideMerge(coreLive(database)), Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))),
  scope
))
const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.runPromise(Effect.provideContext(effect, context as any)) as Promise<A>

const user = `bench${Date.now().toString(36)}`
dovecot.addUser(user, "pw")
const tenant = await run(Effect.gen(function*() {
  const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name: "Mail bench" })
  return { organizationId: org.id, environment: "sandbox" as const }
}))
// BENCH_SUBSCRIBE=0 leaves the organization without a subscription: events are stored, no delivery is queued.
if (process.env.BENCH_SUBSCRIBE !== "0") {
  await run(Effect.flatMap(Webhooks.Webhooks, (w) =>
    w.create(tenant, { url: "http://127.0.0.1:9/hooks", event_types: ["email.received"] })))
}
const mailbox = await run(Effect.flatMap(Mailboxes.Mailboxes, (m) =>
  m.create(tenant, {
    address: `${user}@firm.example`,
    imap: { host: dovecot.host, port: dovecot.port, tls: "none", username: user, password: "pw" }
  })))
const sync = () => run(Effect.flatMap(MailSync.MailSync, (s) => s.run({ mailboxId: mailbox.id, ignoreSchedule: true })))
await sync()

const writer = await dovecot.connect(user)
const reader = async (fromUid: number) => {
  const client = new ImapFlow({
    host: dovecot.host,
    port: dovecot.port,
    secure: false,
    doSTARTTLS: false,
    auth: { user, pass: "pw" },
    logger: false,
    disableAutoIdle: true
  })
  await client.connect()
  await client.mailboxOpen("INBOX", { readOnly: true })
  const uids = (await client.search({ uid: `${fromUid}:*` }, { uid: true })) || []
  const fetched = await client.fetchAll(uids.join(","), MESSAGE_QUERY, { uid: true })
  await client.logout()
  return fetched.length
}

const results: Array<{ round: number; syncMs: number; baselineMs: number; events: number }> = []
let next = 1
for (let round = 1; round <= rounds; round++) {
  for (let i = 0; i < messages; i++) {
    await writer.append("INBOX", rawMessage({
      from: `client${i}@client.example`,
      to: `${user}@firm.example`,
      subject: `Order ${round}-${i}`,
      messageId: `order-${round}-${i}.${user}@client.example`,
      attachment: i % 5 === 0 ? "order.pdf" : undefined
    }), [], new Date())
  }
  let start = performance.now()
  const read = await reader(next)
  const baselineMs = performance.now() - start
  start = performance.now()
  const summary = await sync()
  const syncMs = performance.now() - start
  const events = summary.mailboxes[0]!.events
  if (read !== messages || events !== messages) throw new Error(`read ${read}, announced ${events}, expected ${messages}`)
  next += messages
  results.push({ round, syncMs: Math.round(syncMs), baselineMs: Math.round(baselineMs), events })
}

await writer.logout()
await Effect.runPromise(Scope.close(scope, Exit.void))
await dovecot.stop()

const avg = (f: (r: (typeof results)[number]) => number) => Math.round(results.reduce((n, r) => n + f(r), 0) / results.length)
console.log(JSON.stringify({ database: database._tag, messages, rounds: results }, null, 2))
console.log(`| sync of ${messages} new messages | ${avg((r) => r.syncMs)} ms | ${
  Math.round(messages / (avg((r) => r.syncMs) / 1000))
} messages/s |`)
console.log(`| baseline: imapflow reads the same headers | ${avg((r) => r.baselineMs)} ms | ${
  Math.round(messages / (avg((r) => r.baselineMs) / 1000))
} messages/s |`)
console.log(`ratio ${(avg((r) => r.syncMs) / avg((r) => r.baselineMs)).toFixed(2)}`)
