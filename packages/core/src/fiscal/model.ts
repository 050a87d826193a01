import { Schema } from "effect"
import { ContactId, FiscalStatus } from "../contacts/model.ts"
import { FiscalChange } from "../events/catalog.ts"
import { IsoDate, IsoDateTime, Uuid } from "../shared/schemas.ts"

export { FiscalStatus } from "../contacts/model.ts"

export const FiscalSnapshotId = Uuid.pipe(Schema.brand("FiscalSnapshotId"))
export type FiscalSnapshotId = typeof FiscalSnapshotId.Type

/**
 * One entry of a contact's fiscal history: a status the tax authority
 * published, kept when it was first seen (the baseline) and whenever it
 * differed from the one before (decided: docs/decisions.md, "Fiscal status").
 */
export const FiscalSnapshot = Schema.Struct({
  id: FiscalSnapshotId,
  contact_id: ContactId,
  checked_on: IsoDate.annotate({ description: "The organization's date of the check; the registry was asked as of it" }),
  status: FiscalStatus,
  baseline: Schema.Boolean.annotate({ description: "The first status seen for this CUI: recorded, nothing sent" }),
  changes: Schema.Array(FiscalChange).annotate({
    description: "What changed since the entry before, as published in contact.fiscal_status_changed"
  }),
  event_id: Schema.NullOr(Schema.String).annotate({ description: "The contact.fiscal_status_changed event, when changes were sent" }),
  created_at: IsoDateTime
}).annotate({ identifier: "FiscalSnapshot" })
export type FiscalSnapshot = typeof FiscalSnapshot.Type

/** An open issued invoice of a contact, as much of it as its RON balance needs. */
export interface OpenInvoice {
  readonly currency: string
  readonly remaining_minor: number
  /** RON for one unit of the currency, fixed at issue; null for RON invoices. */
  readonly exchange_rate_ron: string | null
}
