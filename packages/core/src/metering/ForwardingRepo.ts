import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Json, Numeric, Timestamp } from "../shared/columns.ts"
import { orDie } from "../shared/sql.ts"
import { Environment, type TenantScoped } from "../shared/tenant.ts"
import { ForwardingStatus, MeterEventName, Processor, ProcessorCustomerId, UsageRecordId } from "./model.ts"

/**
 * Forwarding is serialized per stream: the usage of one customer on one meter
 * in one environment (the processor takes one call at a time per customer and
 * meter). A forwarder claims streams, not single records, under a lease: while
 * the lease holds, no other forwarder calls the processor for that customer
 * and meter, and the lease holder sends the stream's due records one after
 * another. The lease is renewed before each call and given back at the end;
 * when its forwarder stops, it runs out and another forwarder takes the
 * stream over (docs/decisions.md, "Usage metering").
 */

export interface ClaimRequest {
  readonly now: string
  readonly leaseUntil: string
  readonly claimToken: string
  /** Only streams of these environments (those with a processor credential). */
  readonly environments: ReadonlyArray<Environment>
  /** Streams to claim at most. */
  readonly streams: number
  /** Due records per stream at most. */
  readonly perStream: number
}

export const ClaimedUsage = Schema.Struct({
  usageId: UsageRecordId,
  organizationId: Schema.String,
  quantity: Schema.Number,
  timestamp: Schema.String,
  /** Where the record stood: `sending` means an earlier call's forwarder stopped before filing its outcome. */
  status: ForwardingStatus,
  /** Calls made for it so far (each of them failed, or it would not be due). */
  attempts: Schema.Int
})
export type ClaimedUsage = typeof ClaimedUsage.Type

export const ClaimedStream = Schema.Struct({
  streamId: Schema.String,
  environment: Environment,
  processor: Processor,
  customerId: ProcessorCustomerId,
  meterEventName: MeterEventName,
  claimToken: Schema.String,
  /** Oldest due first. */
  records: Schema.Array(ClaimedUsage)
})
export type ClaimedStream = typeof ClaimedStream.Type

/** What a call did to a record. */
export interface CallOutcome {
  readonly status: "retrying" | "delivered" | "failed"
  /** When the call began; null when the record was filed without one. */
  readonly lastAttemptAt: string | null
  /** When the outcome is filed. */
  readonly filedAt: string
  readonly nextAttemptAt: string | null
  readonly lastError: string | null
  readonly forwardedAt: string | null
}

/** Who holds a stream, and the record a call is about. */
export interface LeasedRecord {
  readonly streamId: string
  readonly claimToken: string
  readonly usageId: UsageRecordId
}

/** The record to begin with a settle, and the lease to renew for its call. */
export interface NextRecord {
  readonly usageId: UsageRecordId
  readonly now: string
  readonly leaseUntil: string
}

const ClaimedRow = Schema.Struct({
  stream_id: Schema.String,
  environment: Environment,
  processor: Processor,
  processor_customer_id: ProcessorCustomerId,
  meter_event_name: MeterEventName,
  records: Json(Schema.Array(Schema.Struct({
    usage_id: UsageRecordId,
    organization_id: Schema.String,
    quantity: Numeric,
    timestamp: Timestamp,
    status: ForwardingStatus,
    attempts: Schema.Int
  })))
})
const decodeClaimed = Schema.decodeUnknownEffect(Schema.Array(ClaimedRow))

/**
 * Storage port of the forwarding outbox. Every method serves every tenant: a
 * forwarder works through whatever is due, of every organization; each write
 * happens only while the caller's lease on the stream holds.
 */
export class ForwardingRepo extends Context.Service<ForwardingRepo, TenantScoped<{
  /** Leases due streams (skipping any another forwarder holds or that waits out a backoff) with their due records. */
  readonly claim: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<ClaimedStream>>
  /**
   * Before a call: the record is `sending`, one attempt more, and the stream's
   * lease runs until `leaseUntil`. False, changing nothing, when the lease is
   * no longer the caller's.
   */
  readonly begin: (record: LeasedRecord, now: string, leaseUntil: string) => Effect.Effect<boolean>
  /**
   * After a call: its outcome, filed only while the lease is the caller's
   * (whether it was). With `next`, the same statement begins the stream's next
   * record as `begin` would, so a stream costs one statement per record.
   */
  readonly settle: (record: LeasedRecord, outcome: CallOutcome, next?: NextRecord) => Effect.Effect<boolean>
  /** Gives the stream back: free at once, or (after a failed call) at `freeAt`. */
  readonly release: (streamId: string, claimToken: string, freeAt: string | null) => Effect.Effect<void>
}, "claim" | "begin" | "settle" | "release">>()("@opsplatform/core/metering/ForwardingRepo") {
  static readonly layerSql: Layer.Layer<ForwardingRepo, never, SqlClient.SqlClient> = Layer.effect(
    ForwardingRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const due = sql`f.status IN ('pending', 'retrying', 'sending')`
      /** A record about to be sent: one attempt more. */
      const sending = (now: string) =>
        sql`status = 'sending', attempts = f.attempts + 1, last_attempt_at = ${now}, updated_at = ${now}`

      return ForwardingRepo.of({
        claim: (r) =>
          r.environments.length === 0 ? Effect.succeed([]) : orDie(sql`WITH free AS (
              SELECT s.id FROM usage_streams s
              WHERE ${sql.in("s.environment", r.environments)}
                AND (s.locked_until IS NULL OR s.locked_until <= ${r.now})
                AND s.id IN (SELECT f.stream_id FROM usage_forwarding f WHERE ${due} AND f.next_attempt_at <= ${r.now})
              ORDER BY s.claimed_at NULLS FIRST
              LIMIT ${r.streams}
              FOR UPDATE OF s SKIP LOCKED
            ), leased AS (
              UPDATE usage_streams s SET locked_until = ${r.leaseUntil}, claim_token = ${r.claimToken}, claimed_at = ${r.now}
              FROM free WHERE s.id = free.id
              RETURNING s.id, s.environment, s.processor, s.processor_customer_id, s.meter_event_name
            ), ranked AS (
              SELECT f.usage_id, f.stream_id, f.status, f.attempts, f.next_attempt_at,
                row_number() OVER (PARTITION BY f.stream_id ORDER BY f.next_attempt_at, f.usage_id) AS n
              FROM usage_forwarding f JOIN leased l ON l.id = f.stream_id
              WHERE ${due} AND f.next_attempt_at <= ${r.now}
            )
            SELECT l.id AS stream_id, l.environment, l.processor, l.processor_customer_id, l.meter_event_name,
              json_agg(json_build_object(
                'usage_id', k.usage_id, 'organization_id', u.organization_id, 'quantity', u.quantity,
                'timestamp', u.timestamp, 'status', k.status, 'attempts', k.attempts
              ) ORDER BY k.n) AS records
            FROM leased l
            JOIN ranked k ON k.stream_id = l.id AND k.n <= ${r.perStream}
            JOIN usage_records u ON u.id = k.usage_id
            GROUP BY l.id, l.environment, l.processor, l.processor_customer_id, l.meter_event_name`).pipe(
              Effect.flatMap((rows) => Effect.orDie(decodeClaimed(rows))),
              Effect.map((rows) =>
                rows.map((row): ClaimedStream => ({
                  streamId: row.stream_id,
                  environment: row.environment,
                  processor: row.processor,
                  customerId: row.processor_customer_id,
                  meterEventName: row.meter_event_name,
                  claimToken: r.claimToken,
                  records: row.records.map((u) => ({
                    usageId: u.usage_id,
                    organizationId: u.organization_id,
                    quantity: u.quantity,
                    timestamp: u.timestamp,
                    status: u.status,
                    attempts: u.attempts
                  }))
                }))
              )
            ),
        begin: (l, now, leaseUntil) =>
          orDie(sql`WITH lease AS (
              UPDATE usage_streams SET locked_until = ${leaseUntil}
              WHERE id = ${l.streamId} AND claim_token = ${l.claimToken} RETURNING id
            )
            UPDATE usage_forwarding f SET ${sending(now)}
            FROM lease WHERE f.usage_id = ${l.usageId} AND f.stream_id = lease.id
            RETURNING f.usage_id`).pipe(Effect.map((rows) => rows.length > 0)),
        settle: (l, o, next) =>
          orDie(sql<{ readonly settled: boolean }>`WITH lease AS (${
            next === undefined
              ? sql`SELECT id FROM usage_streams WHERE id = ${l.streamId} AND claim_token = ${l.claimToken}`
              : sql`UPDATE usage_streams SET locked_until = ${next.leaseUntil}
                  WHERE id = ${l.streamId} AND claim_token = ${l.claimToken} RETURNING id`
          }), settled AS (
              UPDATE usage_forwarding f SET status = ${o.status}, next_attempt_at = ${o.nextAttemptAt},
                last_error = ${o.lastError}, forwarded_at = ${o.forwardedAt},
                last_attempt_at = COALESCE(${o.lastAttemptAt}::timestamptz, f.last_attempt_at), updated_at = ${o.filedAt}
              FROM lease WHERE f.usage_id = ${l.usageId} AND f.stream_id = lease.id
              RETURNING f.usage_id
            ), begun AS (
              UPDATE usage_forwarding f SET ${sending(next?.now ?? o.filedAt)}
              FROM lease WHERE f.usage_id = ${next?.usageId ?? null}::uuid AND f.stream_id = lease.id
              RETURNING f.usage_id
            )
            SELECT EXISTS (SELECT 1 FROM settled) AS settled, (SELECT count(*) FROM begun) AS begun`).pipe(
            Effect.map((rows) => rows[0]?.settled === true)
          ),
        release: (streamId, claimToken, freeAt) =>
          orDie(sql`UPDATE usage_streams SET locked_until = ${freeAt}, claim_token = NULL
            WHERE id = ${streamId} AND claim_token = ${claimToken}`).pipe(Effect.asVoid)
      })
    })
  )
}
