import { Cause, Clock, Context, Effect, Layer, Metric, Option, Queue, Schedule, type Scope } from "effect"
import { countOne, credentialCacheLookups, listenConnected } from "../shared/metrics.ts"
import { CredentialRepo } from "./CredentialRepo.ts"
import type { StoredCredential } from "./model.ts"

/**
 * Where a process hears that credentials changed anywhere — revoked,
 * deleted, rescoped, by any process of the deployment or by the database
 * itself (a cascade). On PostgreSQL: LISTEN on the channel a trigger on
 * `credentials` notifies (migration 0017).
 */
export class CredentialChanges extends Context.Service<CredentialChanges, {
  /**
   * Starts listening and gives the changes once listening is confirmed: each
   * payload a changed credential's id, or "*" when any may have changed. The
   * queue fails when the source is lost.
   */
  readonly subscribe: Effect.Effect<Queue.Dequeue<{ readonly payload: string }, unknown>, unknown, Scope.Scope>
  /** Whether the caller runs inside a database transaction (its changes are announced only when it commits). */
  readonly inTransaction: Effect.Effect<boolean>
}>()("@opsplatform/core/auth/CredentialChanges") {}

/** The channel the `credentials` trigger notifies, with the changed credential's id. */
export const CREDENTIAL_CHANNEL = "opsplatform_credentials"

export interface CacheSettings {
  /** How long a credential read from the database is trusted without hearing of a change. */
  readonly ttlMs: number
  readonly maxEntries: number
  /** How long a revocation waits to hear its own announcement before it returns anyway. */
  readonly announceWaitMs: number
  /** How much longer it waits once heard, for the other processes to have it too. */
  readonly announceGraceMs: number
}

export const defaultCacheSettings: CacheSettings = { ttlMs: 30_000, maxEntries: 10_000, announceWaitMs: 1_000, announceGraceMs: 50 }

/** How many heard ids are remembered for revocations waiting on them. */
const HEARD_KEPT = 10_000

interface Entry {
  readonly credential: StoredCredential
  readonly until: number
}

/**
 * `CredentialRepo` with authentication's lookup by token hash kept in memory,
 * so a request does not read its credential from the database every time.
 * Decided: docs/decisions.md, "Credential cache". The rules that keep it
 * honest:
 * - nothing is cached until the process is listening for changes; when the
 *   listener is lost, the cache empties and stays off until it listens again;
 * - before a cached credential is trusted, the request yields once to the
 *   event loop and applies every change the listener has received: a change
 *   already in the process's hands always wins over the cache;
 * - a read during which a change was heard is not cached (it may hold the row
 *   as it was before);
 * - this process's own revocations evict before they return and, outside a
 *   transaction, return only once their announcement has come back (up to
 *   `announceWaitMs`): PostgreSQL sends it to every process at that commit;
 * - an entry lives at most `ttlMs`, and only found credentials are kept.
 */
const listenGauge = Metric.withAttributes(listenConnected, { channel: "credentials" })

export const cachedCredentialRepo = (
  settings: CacheSettings = defaultCacheSettings
): Layer.Layer<CredentialRepo, never, CredentialRepo | CredentialChanges> =>
  Layer.effect(
    CredentialRepo,
    Effect.gen(function*() {
      const inner = yield* CredentialRepo
      const changes = yield* CredentialChanges
      const byHash = new Map<string, Entry>()
      const hashById = new Map<string, string>()
      // The listener's queue while listening; changes wait in it until the next `drain`.
      let heardFrom: Queue.Dequeue<{ readonly payload: string }, unknown> | undefined
      // Bumped by every eviction: a read that saw another epoch begin is not cached.
      let epoch = 0
      // The epoch at which each id was last heard, for revocations waiting on their announcement.
      const heardAt = new Map<string, number>()

      /** Drops one entry from both maps. */
      const evict = (hash: string) => {
        const entry = byHash.get(hash)
        if (entry === undefined) return
        byHash.delete(hash)
        hashById.delete(entry.credential.id)
      }
      const forget = (id: string) => {
        epoch++
        if (id === "*") {
          byHash.clear()
          hashById.clear()
          return
        }
        const hash = hashById.get(id)
        if (hash !== undefined) evict(hash)
      }
      const forgetWhere = (matches: (c: StoredCredential) => boolean) => {
        epoch++
        for (const [hash, entry] of byHash) if (matches(entry.credential)) evict(hash)
      }
      const heard = (id: string) => {
        forget(id)
        heardAt.delete(id)
        heardAt.set(id, epoch)
        if (heardAt.size > HEARD_KEPT) heardAt.delete(heardAt.keys().next().value!)
      }
      // Why the listener was lost, as `drain` found it, for the warning.
      let lost: Cause.Cause<unknown> | undefined
      const off = () => {
        heardFrom = undefined
        forget("*")
      }
      /** Applies every change the listener has received; a lost listener turns the cache off. */
      const drain = Effect.suspend(() => {
        const queue = heardFrom
        if (queue === undefined) return Effect.void
        return Queue.clear(queue).pipe(
          Effect.map((received) => {
            for (const change of received) heard(change.payload)
          }),
          Effect.catchCause((cause) =>
            Effect.sync(() => {
              if (heardFrom !== queue) return
              lost = cause
              off()
            })
          )
        )
      })
      const remember = (credential: StoredCredential, now: number) => {
        if (byHash.size >= settings.maxEntries) {
          // The oldest entry goes first (a Map keeps insertion order).
          const oldest = byHash.keys().next()
          if (oldest.done !== true) evict(oldest.value)
        }
        byHash.set(credential.token_hash, { credential, until: now + settings.ttlMs })
        hashById.set(credential.id, credential.token_hash)
      }

      // Listens for as long as the layer lives, applying changes at least every second even without requests;
      // a lost listener turns the cache off until it listens again.
      const listen = Effect.scoped(Effect.gen(function*() {
        const queue = yield* changes.subscribe
        forget("*")
        heardFrom = queue
        yield* Metric.update(listenGauge, 1)
        while (heardFrom === queue) {
          yield* Effect.sleep("1 second")
          yield* drain
        }
        const cause = lost ?? Cause.fail(new Error("the change listener stopped"))
        lost = undefined
        return yield* Effect.failCause(cause)
      })).pipe(
        Effect.onExit(() => Effect.andThen(Effect.sync(off), Metric.update(listenGauge, 0))),
        Effect.tapCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.void
            : Effect.logWarning("Credential cache off: the change listener was lost; listening again", cause)
        ),
        Effect.retry(Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("5 seconds")]))
      )
      yield* Effect.forkScoped(listen)

      /** Waits until each of `ids` has been heard after `since`, for at most announceWaitMs. */
      const announced = (ids: ReadonlyArray<string>, since: number) =>
        Effect.gen(function*() {
          if (heardFrom === undefined || ids.length === 0 || (yield* changes.inTransaction)) return
          const pending = () => heardFrom !== undefined && ids.some((id) => (heardAt.get(id) ?? 0) <= since)
          yield* drain
          while (pending()) {
            yield* Effect.sleep("1 millis")
            yield* drain
          }
          // The other processes' listening backends were signalled at the same commit; on a loaded machine one may
          // be scheduled a moment after this one. Revocations are rare: they can spare the moment.
          yield* Effect.sleep(settings.announceGraceMs)
        }).pipe(Effect.timeout(settings.announceWaitMs + settings.announceGraceMs), Effect.ignore)

      const findByHash = (hash: string) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (heardFrom !== undefined && byHash.has(hash)) {
            // A change may have reached this process with the request: let it in first.
            yield* Effect.yieldNow
            yield* drain
            const entry = byHash.get(hash)
            if (heardFrom !== undefined && entry !== undefined && entry.until > now) {
              yield* countOne(credentialCacheLookups, { result: "hit" })
              return Option.some(entry.credential)
            }
          }
          yield* countOne(credentialCacheLookups, { result: "miss" })
          const listening = heardFrom
          const startedAt = epoch
          const found = yield* inner.findByHash(hash)
          yield* drain
          if (listening !== undefined && heardFrom === listening && epoch === startedAt && Option.isSome(found)) remember(found.value, now)
          return found
        })

      return CredentialRepo.of({
        ...inner,
        findByHash,
        revoke: (tenant, id, at) =>
          Effect.gen(function*() {
            const since = epoch
            const revoked = yield* Effect.ensuring(inner.revoke(tenant, id, at), Effect.sync(() => forget(id)))
            // Already revoked before: nothing changed, nothing is announced.
            if (Option.isSome(revoked) && revoked.value.revoked_at !== null && Date.parse(revoked.value.revoked_at) === Date.parse(at)) {
              yield* announced([id], since)
            }
            return revoked
          }),
        revokeGrant: (grantId, at) =>
          Effect.ensuring(inner.revokeGrant(grantId, at), Effect.sync(() => forgetWhere((c) => c.grant_id === grantId))),
        revokeDevice: (tenant, deviceId, at) =>
          Effect.gen(function*() {
            const since = epoch
            const revoked = yield* Effect.ensuring(
              inner.revokeDevice(tenant, deviceId, at),
              Effect.sync(() => forgetWhere((c) => c.device_id === deviceId))
            )
            yield* announced(revoked.map((c) => c.id), since)
            return revoked
          })
      })
    })
  )
