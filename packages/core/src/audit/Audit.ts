import { Clock, Context, Effect, Layer } from "effect"
import { ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis } from "../shared/time.ts"
import { AuditRepo } from "./AuditRepo.ts"
import { type AuditEntry, type AuditEvent, AuditEventId, type AuditFilter } from "./model.ts"

/**
 * The audit log of each organization environment. `record` writes in the
 * caller's transaction when there is one, so an audited change and its entry
 * commit together; an attempt that is refused is recorded on its own.
 */
export class Audit extends Context.Service<Audit, {
  readonly record: (tenant: Tenant, entry: AuditEntry) => Effect.Effect<AuditEvent>
  readonly list: (tenant: Tenant, filter: AuditFilter, page: PageRequest) => Effect.Effect<Page<AuditEvent>, ValidationFailed>
}>()("@opsplatform/core/audit/Audit") {
  static readonly layer: Layer.Layer<Audit, never, AuditRepo | Ids> = Layer.effect(
    Audit,
    Effect.gen(function*() {
      const repo = yield* AuditRepo
      const ids = yield* Ids
      return Audit.of({
        record: Effect.fn("Audit.record")(function*(tenant, entry) {
          const event: AuditEvent = {
            ...entry,
            details: entry.details ?? {},
            id: yield* newId(ids, AuditEventId),
            created_at: isoFromMillis(yield* Clock.currentTimeMillis)
          }
          yield* repo.append(tenant, event)
          return event
        }),
        list: (tenant, filter, page) =>
          filter.from !== undefined && filter.to !== undefined && Date.parse(filter.to) <= Date.parse(filter.from)
            ? Effect.fail(ValidationFailed.field("to", "must be later than from"))
            : repo.list(tenant, filter, page)
      })
    })
  )
}
