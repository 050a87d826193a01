import { Schema } from "effect"
import { IsoDate, IsoDateTime, NonBlankString, Uuid } from "../shared/schemas.ts"

export const ObligationType = Schema.Literals(["payment", "delivery", "report", "renewal_notice", "custom"])
export type ObligationType = typeof ObligationType.Type

export const Recurrence = Schema.Literals(["none", "monthly", "quarterly", "yearly"])
export type Recurrence = typeof Recurrence.Type

/** Obligation statuses; the moves between them are `obligationTransitions` in rules.ts (decided: docs/decisions.md). */
export const ObligationStatus = Schema.Literals(["pending", "completed", "cancelled"])
export type ObligationStatus = typeof ObligationStatus.Type

/** Where an obligation stands today in the organization's time zone; derived by `deriveBucket` in rules.ts. */
export const ObligationBucket = Schema.Literals(["overdue", "due_soon", "upcoming", "done"])
export type ObligationBucket = typeof ObligationBucket.Type

export const Obligor = Schema.Literals(["us", "counterparty"])
export type Obligor = typeof Obligor.Type

export const DEFAULT_REMIND_DAYS_BEFORE = 7

const Title = NonBlankString(255)
const RemindDaysBefore = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 365 }))
const ClauseLabel = Schema.String.check(Schema.isMaxLength(80))
const EvidenceNote = Schema.String.check(Schema.isMaxLength(2000))

/** The contract obligation as the API shows it. */
export const Obligation = Schema.Struct({
  id: Schema.String,
  contract_id: Schema.String,
  contract_name: Schema.String.annotate({ description: "The contract's current name" }),
  title: Schema.String,
  type: ObligationType,
  due_date: Schema.String.annotate({ format: "date" }),
  recurrence: Recurrence,
  remind_days_before: Schema.Int,
  status: ObligationStatus,
  bucket: ObligationBucket.annotate({
    description: "overdue, due_soon (inside the reminder window), upcoming, or done (completed or cancelled), " +
      "as of today in the organization's time zone"
  }),
  obligor: Obligor,
  assignee_user_id: Schema.NullOr(Schema.String),
  assignee_name: Schema.NullOr(Schema.String).annotate({ description: "The assignee's current name" }),
  clause_label: Schema.NullOr(Schema.String),
  clause_excerpt: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  evidence_document_id: Schema.NullOr(Schema.String),
  evidence_note: Schema.NullOr(Schema.String),
  has_evidence: Schema.Boolean,
  completed_at: Schema.NullOr(IsoDateTime),
  cancelled_at: Schema.NullOr(IsoDateTime),
  overdue_notified_at: Schema.NullOr(IsoDateTime),
  escalated_at: Schema.NullOr(IsoDateTime),
  previous_obligation_id: Schema.NullOr(Schema.String).annotate({
    description: "The obligation whose completion created this one (recurrence)"
  }),
  next_obligation_id: Schema.NullOr(Schema.String).annotate({
    description: "The obligation its completion created and that is not cancelled (recurrence)"
  }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "ContractObligation" })
export type Obligation = typeof Obligation.Type

/** The fields of the spec's table a creation may leave out; a PATCH may send any of them. */
const optionalFields = {
  recurrence: Schema.optionalKey(Recurrence),
  remind_days_before: Schema.optionalKey(RemindDaysBefore),
  obligor: Schema.optionalKey(Obligor),
  assignee_user_id: Schema.optionalKey(Schema.NullOr(Uuid)),
  clause_label: Schema.optionalKey(Schema.NullOr(ClauseLabel)),
  clause_excerpt: Schema.optionalKey(Schema.NullOr(Schema.String)),
  description: Schema.optionalKey(Schema.NullOr(Schema.String)),
  evidence_document_id: Schema.optionalKey(Schema.NullOr(Uuid)),
  evidence_note: Schema.optionalKey(Schema.NullOr(EvidenceNote))
}

export const ObligationCreate = Schema.Struct({
  contract_id: Uuid,
  title: Title,
  type: ObligationType,
  due_date: IsoDate,
  ...optionalFields
}).annotate({ identifier: "ContractObligationCreate" })
export type ObligationCreate = typeof ObligationCreate.Type

/** `contract_id` is fixed after creation: naming it in a PATCH is a validation failure on that field. */
const FixedAfterCreation = Schema.Unknown.check(
  Schema.makeFilter(() => "is fixed after creation; create a new obligation for another contract")
).annotate({ description: "Refused: fixed after creation" })

export const ObligationUpdate = Schema.Struct({
  contract_id: Schema.optionalKey(FixedAfterCreation),
  title: Schema.optionalKey(Title),
  type: Schema.optionalKey(ObligationType),
  due_date: Schema.optionalKey(IsoDate.annotate({ description: "Changing it resets the overdue notice and the escalation" })),
  ...optionalFields
}).annotate({ identifier: "ContractObligationUpdate" })
export type ObligationUpdate = Omit<typeof ObligationUpdate.Type, "contract_id">

/** Optional evidence given when completing. */
export const ObligationComplete = Schema.Struct({
  evidence_document_id: optionalFields.evidence_document_id,
  evidence_note: optionalFields.evidence_note
}).annotate({ identifier: "ContractObligationComplete" })
export type ObligationComplete = typeof ObligationComplete.Type

export interface ObligationFilter {
  readonly contract_id?: string | undefined
  readonly status?: ObligationStatus | undefined
  readonly bucket?: ObligationBucket | undefined
  readonly type?: ObligationType | undefined
  readonly obligor?: Obligor | undefined
  readonly assignee_user_id?: string | undefined
  readonly due_from?: string | undefined
  readonly due_to?: string | undefined
}

/**
 * An obligation as stored. Names (contract, assignee), the bucket and
 * `has_evidence` are not stored: they are derived when read, so they are never
 * out of step. `reminder_sent_at` and `recurrence_anchor_day` are internal.
 */
export interface ObligationRecord {
  readonly id: string
  readonly contract_id: string
  readonly title: string
  readonly type: ObligationType
  readonly due_date: string
  readonly recurrence: Recurrence
  /** Day of month a recurring series keeps (Jan 31 → Feb 29 → Mar 31); set from `due_date` whenever it is set. */
  readonly recurrence_anchor_day: number
  readonly remind_days_before: number
  readonly status: ObligationStatus
  readonly obligor: Obligor
  readonly assignee_user_id: string | null
  readonly clause_label: string | null
  readonly clause_excerpt: string | null
  readonly description: string | null
  readonly evidence_document_id: string | null
  readonly evidence_note: string | null
  readonly completed_at: string | null
  readonly cancelled_at: string | null
  /** When the reminder for the current due date and window was sent; cleared when either changes. */
  readonly reminder_sent_at: string | null
  readonly overdue_notified_at: string | null
  readonly escalated_at: string | null
  readonly previous_obligation_id: string | null
  readonly created_at: string
  readonly updated_at: string
}

/** A stored obligation with the names it shows, read in the same query. */
export interface StoredObligation extends ObligationRecord {
  readonly contract_name: string
  readonly assignee_name: string | null
  readonly next_obligation_id: string | null
}
