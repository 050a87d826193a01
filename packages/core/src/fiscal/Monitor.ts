import { Clock, Context, Effect, Layer, Option } from "effect"
import { event, fiscalStatusEventId, type FiscalChangeKind } from "../events/catalog.ts"
import { Outbox } from "../events/Outbox.ts"
import { Ids, newId } from "../shared/Ids.ts"
import type { Environment } from "../shared/tenant.ts"
import { isoFromMillis, localDate, localHour } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { type ClaimedContact, FiscalRepo } from "./FiscalRepo.ts"
import { FiscalRegistry, type RegistryAnswer } from "./FiscalRegistry.ts"
import { FiscalSnapshotId } from "./model.ts"
import { eventDate, fiscalChanges, openInvoicesSummary, sameStatus } from "./rules.ts"

/** Contacts one claim takes: one registry request (ANAF answers about at most 100 CUIs at a time). */
export const CHECK_BATCH = 100

/** How long a claim holds its contacts: far longer than a request with its retries can take. */
export const CLAIM_LEASE_MS = 10 * 60 * 1000

export interface FiscalScope {
  readonly organizationId?: string | undefined
  /**
   * Only organizations whose local time is at or past this hour (0–23): the
   * daily run inside `serve`. Without it every due contact is checked now.
   */
  readonly fromHour?: number | undefined
}

export interface FiscalSummary {
  readonly ran_at: string
  /** Contacts the registry answered about (baselines included). */
  readonly checked: number
  /** First checks: the status is recorded, nothing is sent. */
  readonly baselines: number
  /** Contacts the registry does not know: unknown, never a change; checked again tomorrow. */
  readonly not_found: number
  /** Contacts claimed while the registry could not answer; due again at the next pass. */
  readonly unavailable: number
  readonly events: ReadonlyArray<{
    readonly event_id: string
    readonly contact_id: string
    readonly organization_id: string
    readonly environment: Environment
    readonly kinds: ReadonlyArray<FiscalChangeKind>
  }>
}

type Outcome =
  | { readonly _tag: "lost" }
  | { readonly _tag: "not_found" }
  | { readonly _tag: "checked"; readonly baseline: boolean; readonly event?: FiscalSummary["events"][number] | undefined }

/**
 * The daily fiscal status check: every customer with open issued invoices
 * whose status was not checked on its organization's current date is claimed
 * (by one process, however many run), looked up at the registry, and
 * compared with its last status. The first check records a baseline and sends
 * nothing; a later one that finds changes publishes one
 * `contact.fiscal_status_changed` with all of them, in the transaction that
 * records the new status.
 */
export class FiscalMonitor extends Context.Service<FiscalMonitor, {
  /** One pass at the current time. */
  readonly run: (scope?: FiscalScope) => Effect.Effect<FiscalSummary>
  /** One pass as of `epochMs`. */
  readonly runAt: (epochMs: number, scope?: FiscalScope) => Effect.Effect<FiscalSummary>
}>()("@opsplatform/core/fiscal/FiscalMonitor") {
  static readonly layer: Layer.Layer<FiscalMonitor, never, FiscalRepo | Outbox | Ids | Transactor> = Layer.effect(
    FiscalMonitor,
    Effect.gen(function*() {
      const repo = yield* FiscalRepo
      const outbox = yield* Outbox
      const ids = yield* Ids
      const tx = yield* Transactor
      const registry = yield* FiscalRegistry

      /** Records what the registry said about one claimed contact, inside the batch's transaction. */
      const record = (c: ClaimedContact, answer: RegistryAnswer, claim: string, today: string, at: string) =>
        Effect.gen(function*() {
          const row = yield* repo.lockClaimed(c.tenant, c.contactId, claim)
          // The claim ran out and another pass took the contact, or its VAT number changed since the claim.
          if (Option.isNone(row) || row.value.cui !== c.cui) return { _tag: "lost" } as Outcome
          const status = answer.found.get(c.cui)
          if (status === undefined) {
            yield* repo.saveCheck(c.tenant, c.contactId, claim, { check_date: today })
            return { _tag: "not_found" } as Outcome
          }
          const previous = row.value.fiscal_status
          // A contact whose VAT number changed starts over: its old status was another company's.
          const baseline = previous === null || previous.cui !== status.cui
          const changes = baseline ? [] : fiscalChanges(previous, status, today)
          const eventId = changes.length === 0 ? null : fiscalStatusEventId(c.contactId, changes[0]!.kind, eventDate(changes[0]!, today))
          if (eventId !== null) {
            const open = openInvoicesSummary(yield* repo.openInvoices(c.tenant, c.contactId))
            yield* outbox.publish(c.tenant, event("contact.fiscal_status_changed", eventId, { changes, open_invoices: open }))
          }
          if (baseline || !sameStatus(previous, status)) {
            yield* repo.insertSnapshot(c.tenant, {
              id: yield* newId(ids, FiscalSnapshotId),
              contact_id: c.contactId,
              checked_on: today,
              status,
              baseline,
              changes,
              event_id: eventId,
              created_at: at
            })
          }
          yield* repo.saveCheck(c.tenant, c.contactId, claim, { check_date: today, answered: { status, checked_at: at } })
          return {
            _tag: "checked",
            baseline,
            event: eventId === null ? undefined : {
              event_id: eventId,
              contact_id: c.contactId,
              organization_id: c.tenant.organizationId,
              environment: c.tenant.environment,
              kinds: changes.map((ch) => ch.kind)
            }
          } as Outcome
        })

      const runAt = Effect.fn("FiscalMonitor.run")(function*(epochMs: number, scope?: FiscalScope) {
        const at = isoFromMillis(epochMs)
        const until = isoFromMillis(epochMs + CLAIM_LEASE_MS)
        const outcomes: Array<Outcome> = []
        let unavailable = 0
        zones: for (const timeZone of yield* repo.timeZonesWithCandidates(scope?.organizationId)) {
          // Zones are checked when set; one the runtime no longer knows must not stop the other organizations' checks.
          const local = yield* Effect.try(() => ({ today: localDate(epochMs, timeZone), hour: localHour(epochMs, timeZone) })).pipe(
            Effect.tapError(() =>
              Effect.logWarning("fiscal monitor skips an unknown time zone").pipe(Effect.annotateLogs({ time_zone: timeZone }))
            ),
            Effect.option
          )
          if (Option.isNone(local)) continue
          if (scope?.fromHour !== undefined && local.value.hour < scope.fromHour) continue
          const today = local.value.today
          for (;;) {
            const claim = yield* ids.uuid
            const claimed = yield* tx.withTransaction(
              repo.claim({ timeZone, today, at, until, claim, limit: CHECK_BATCH, organizationId: scope?.organizationId })
            )
            if (claimed.length === 0) break
            const answer = yield* registry.lookup(claimed.map((c) => c.cui), today).pipe(Effect.result)
            if (answer._tag === "Failure") {
              // Nothing is known about these contacts: they stay due, and this pass stops asking.
              yield* repo.release(claim)
              unavailable += claimed.length
              yield* Effect.logWarning("fiscal registry unavailable; the check is retried at the next pass").pipe(
                Effect.annotateLogs({ reason: answer.failure.reason, contacts: claimed.length })
              )
              break zones
            }
            outcomes.push(
              ...yield* tx.withTransaction(Effect.forEach(claimed, (c) => record(c, answer.success, claim, today, at)))
            )
            if (claimed.length < CHECK_BATCH) break
          }
        }
        const checked = outcomes.filter((o) => o._tag === "checked")
        return {
          ran_at: at,
          checked: checked.length,
          baselines: checked.filter((o) => o.baseline).length,
          not_found: outcomes.filter((o) => o._tag === "not_found").length,
          unavailable,
          events: checked.flatMap((o) => (o.event === undefined ? [] : [o.event]))
        }
      })

      return FiscalMonitor.of({ runAt, run: (scope) => Effect.flatMap(Clock.currentTimeMillis, (ms) => runAt(ms, scope)) })
    })
  )
}
