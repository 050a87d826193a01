import { Schema } from "effect"
import { Filters } from "../shared/filters.ts"
import { Instant, isMaxChars, IsoDateTime, Uuid } from "../shared/schemas.ts"

export const AuditEventId = Uuid.pipe(Schema.brand("AuditEventId"))
export type AuditEventId = typeof AuditEventId.Type

/** How an audited attempt ended. */
export const AuditOutcome = Schema.Literals(["success", "failure", "denied"])
export type AuditOutcome = typeof AuditOutcome.Type

/**
 * One audited act, kept in the log of the organization environment it
 * concerns. The actor is the credential that acted and the organization it
 * belongs to, which differs from the log's own organization when a cabinet
 * acts for a client. `details` holds identifiers and counts only — never a
 * token, a secret or a PIN (docs/decisions.md, "Design: shared by the areas").
 */
export const AuditEvent = Schema.Struct({
  id: AuditEventId,
  action: Schema.String.annotate({ examples: ["display.unlock", "grant.approve", "request.on_behalf"] }),
  outcome: AuditOutcome,
  actor_credential_id: Schema.NullOr(Schema.String),
  actor_organization_id: Schema.NullOr(Schema.String),
  resource_type: Schema.NullOr(Schema.String),
  resource_id: Schema.NullOr(Schema.String),
  device_id: Schema.NullOr(Schema.String),
  request_id: Schema.NullOr(Schema.String),
  details: Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.Null])),
  created_at: IsoDateTime
}).annotate({ identifier: "AuditEvent" })
export type AuditEvent = typeof AuditEvent.Type

/** What a caller records; the log adds the id and the time. */
export type AuditEntry = Omit<AuditEvent, "id" | "created_at" | "details"> & {
  readonly details?: AuditEvent["details"] | undefined
}

export const AuditFilter = Schema.Struct({
  action: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), isMaxChars(100))),
  device_id: Schema.optionalKey(Uuid),
  from: Schema.optionalKey(Instant.annotate({ description: "created_at on or after" }).pipe(Filters.from("created_at"))),
  to: Schema.optionalKey(Instant.annotate({ description: "created_at before" }).pipe(Filters.before("created_at")))
})
export type AuditFilter = typeof AuditFilter.Type
