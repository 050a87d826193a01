import { flow, Schema, Struct } from "effect"
import { ContractId } from "../contracts/model.ts"
import { Filters } from "../shared/filters.ts"
import { isMaxChars, IsoDate, IsoDateTime, NonBlankString, Uuid } from "../shared/schemas.ts"

export const ObligationId = Uuid.pipe(Schema.brand("ObligationId"))
export type ObligationId = typeof ObligationId.Type

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

/** The notices the monitor sends about a pending obligation (see `noticesDue` in rules.ts). */
export const NoticeKind = Schema.Literals(["reminder", "overdue", "escalation"])
export type NoticeKind = typeof NoticeKind.Type

export const DEFAULT_REMIND_DAYS_BEFORE = 7

const Title = NonBlankString(255)
const RemindDaysBefore = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 365 }))
const ClauseLabel = Schema.String.check(isMaxChars(80))
const EvidenceNote = Schema.String.check(isMaxChars(2000))

/** The contract obligation as the API shows it. */
export const Obligation = Schema.Struct({
  id: ObligationId,
  contract_id: ContractId,
  contract_name: Schema.String.annotate({ description: "The contract's current name" }),
  title: Title,
  type: ObligationType,
  due_date: IsoDate,
  recurrence: Recurrence,
  remind_days_before: RemindDaysBefore,
  status: ObligationStatus,
  bucket: ObligationBucket.annotate({
    description: "overdue, due_soon (inside the reminder window), upcoming, or done (completed or cancelled), " +
      "as of today in the organization's time zone"
  }),
  obligor: Obligor,
  assignee_user_id: Schema.NullOr(Uuid),
  assignee_name: Schema.NullOr(Schema.String).annotate({ description: "The assignee's current name" }),
  clause_label: Schema.NullOr(ClauseLabel),
  clause_excerpt: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  evidence_document_id: Schema.NullOr(Uuid),
  evidence_note: Schema.NullOr(EvidenceNote),
  has_evidence: Schema.Boolean,
  completed_at: Schema.NullOr(IsoDateTime),
  cancelled_at: Schema.NullOr(IsoDateTime),
  overdue_notified_at: Schema.NullOr(IsoDateTime),
  escalated_at: Schema.NullOr(IsoDateTime),
  previous_obligation_id: Schema.NullOr(ObligationId).annotate({
    description: "The obligation whose completion created this one (recurrence)"
  }),
  next_obligation_id: Schema.NullOr(ObligationId).annotate({
    description: "The obligation its completion created and that is not cancelled (recurrence)"
  }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "ContractObligation" })
export type Obligation = typeof Obligation.Type

/** Fields the store reads from other rows with the obligation (names, the successor): never written, so never stale. */
export const readOnlyFields = ["contract_name", "assignee_name", "next_obligation_id"] as const

/**
 * An obligation as stored, with the names it shows read in the same query.
 * The bucket and `has_evidence` are not stored: they are derived when shown.
 * `recurrence_anchor_day` and `reminder_sent_at` are internal.
 */
export const StoredObligation = Obligation.mapFields(flow(
  Struct.omit(["bucket", "has_evidence"]),
  Struct.assign({
    /** Day of month a recurring series keeps (Jan 31 → Feb 29 → Mar 31); set from `due_date` whenever it is set. */
    recurrence_anchor_day: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 31 })),
    /** When the reminder for the current due date and window was sent; cleared when either changes. */
    reminder_sent_at: Schema.NullOr(IsoDateTime)
  })
))
export type StoredObligation = typeof StoredObligation.Type

/** The stored record itself: what a write sets. */
export const ObligationRecord = StoredObligation.mapFields(Struct.omit(readOnlyFields))
export type ObligationRecord = typeof ObligationRecord.Type

/** What a caller may set. */
const Editable = Obligation.mapFields(Struct.pick([
  "contract_id",
  "title",
  "type",
  "due_date",
  "recurrence",
  "remind_days_before",
  "obligor",
  "assignee_user_id",
  "clause_label",
  "clause_excerpt",
  "description",
  "evidence_document_id",
  "evidence_note"
]))

/** The contract, title, type and due date are required; the rest default (see `Obligations.create`). */
export const ObligationCreate = Editable.mapFields(Struct.mapOmit(["contract_id", "title", "type", "due_date"], Schema.optionalKey))
  .annotate({ identifier: "ContractObligationCreate" })
export type ObligationCreate = typeof ObligationCreate.Type

/** `contract_id` is fixed after creation: naming it in a PATCH is a validation failure on that field. */
const FixedAfterCreation = Schema.Unknown.check(
  Schema.makeFilter(() => "is fixed after creation; create a new obligation for another contract")
).annotate({ description: "Refused: fixed after creation" })

/**
 * Every editable field may be sent, except `contract_id`: it keeps a refusal
 * schema in its place rather than being left out, so naming it fails on that
 * field instead of being dropped as an unknown key.
 */
export const ObligationUpdate = Editable.mapFields(flow(
  Struct.map(Schema.optionalKey),
  Struct.assign({
    contract_id: Schema.optionalKey(FixedAfterCreation),
    due_date: Schema.optionalKey(IsoDate.annotate({ description: "Changing it resets the overdue notice and the escalation" }))
  })
)).annotate({ identifier: "ContractObligationUpdate" })
export type ObligationUpdate = Omit<typeof ObligationUpdate.Type, "contract_id">

/** Optional evidence given when completing. */
export const ObligationComplete = Editable.mapFields(flow(
  Struct.pick(["evidence_document_id", "evidence_note"]),
  Struct.map(Schema.optionalKey)
)).annotate({ identifier: "ContractObligationComplete" })
export type ObligationComplete = typeof ObligationComplete.Type

export const ObligationFilter = Schema.Struct({
  contract_id: Schema.optionalKey(ContractId),
  status: Schema.optionalKey(ObligationStatus),
  bucket: Schema.optionalKey(ObligationBucket.annotate({ description: "As of today in the organization's time zone" }).pipe(Filters.own)),
  type: Schema.optionalKey(ObligationType),
  obligor: Schema.optionalKey(Obligor),
  assignee_user_id: Schema.optionalKey(Uuid),
  due_from: Schema.optionalKey(IsoDate.annotate({ description: "due_date on or after" }).pipe(Filters.from("due_date"))),
  due_to: Schema.optionalKey(IsoDate.annotate({ description: "due_date on or before" }).pipe(Filters.to("due_date")))
})
export type ObligationFilter = typeof ObligationFilter.Type
