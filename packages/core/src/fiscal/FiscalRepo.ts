import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { ContactId, FiscalStatus } from "../contacts/model.ts"
import { FiscalChange } from "../events/catalog.ts"
import { Json, Numeric, Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { table, tenantTable } from "../shared/tables.ts"
import { Environment, type Tenant, type TenantScoped } from "../shared/tenant.ts"
import { FiscalSnapshot, type OpenInvoice } from "./model.ts"

export const SnapshotRow = FiscalSnapshot.mapFields(Struct.assign({
  status: Json(FiscalStatus),
  changes: Json(Schema.Array(FiscalChange)),
  created_at: Timestamp
}))

/** A contact as the check reads it, locked under its claim. */
const CheckedRow = Schema.Struct({
  id: ContactId,
  vat_number: Schema.String,
  fiscal_status: Schema.NullOr(Json(FiscalStatus))
})

/** What a claim returns of each contact: claims span organizations, so the row carries its tenant. */
const ClaimedRow = Schema.Struct({
  id: ContactId,
  organization_id: Schema.String,
  environment: Environment,
  vat_number: Schema.String
})

const OpenInvoiceRow = Schema.Struct({
  id: Schema.String,
  currency: Schema.String,
  remaining_minor: Numeric,
  exchange_rate_ron: Schema.NullOr(Schema.String)
})

/** A contact the caller has just claimed for a check. */
export interface ClaimedContact {
  readonly tenant: Tenant
  readonly contactId: ContactId
  /** The CUI to ask about: the contact's VAT number (digits, no `RO`). */
  readonly cui: string
}

export interface ClaimScope {
  readonly timeZone: string
  /** The date in `timeZone` (YYYY-MM-DD): contacts checked on it are not due. */
  readonly today: string
  /** Now (ISO): claims that ran out before it are free. */
  readonly at: string
  /** Until when the claim holds the contacts. */
  readonly until: string
  /** The claim's id (a UUID), which only its holder can record or release. */
  readonly claim: string
  readonly limit: number
  readonly organizationId?: string | undefined
}

export interface CheckOutcome {
  /** The organization's date of the check: the contact is not due again on it. */
  readonly check_date: string
  /** The status the registry answered, and when; absent when it does not know the CUI. */
  readonly answered?: { readonly status: FiscalStatus; readonly checked_at: string } | undefined
}

/**
 * Storage port of the fiscal check. A contact is a candidate when it is a
 * customer (or both) registered in Romania with a VAT number and has at least
 * one open issued invoice (SENT or PARTIALLY_PAID); it is due when it was not
 * checked on `today` and no unexpired claim holds it.
 *
 * `claim` marks up to `limit` due contacts of the organizations in `timeZone`
 * (or of the one given) with the claim id, and returns them: each contact is
 * claimed by exactly one caller however many run at once. Only the holder of
 * a claim can lock (`lockClaimed`), record (`saveCheck`, which ends the
 * claim) or `release` its contacts; a claim that ran out can be taken by the
 * next caller, and its late holder then records nothing.
 */
export class FiscalRepo extends Context.Service<FiscalRepo, TenantScoped<{
  readonly timeZonesWithCandidates: (organizationId?: string | undefined) => Effect.Effect<ReadonlyArray<string>>
  readonly claim: (scope: ClaimScope) => Effect.Effect<ReadonlyArray<ClaimedContact>>
  readonly release: (claim: string) => Effect.Effect<void>
  /** The claimed contact, locked until the transaction ends; none when the claim is no longer the caller's. */
  readonly lockClaimed: (
    tenant: Tenant,
    contactId: string,
    claim: string
  ) => Effect.Effect<Option.Option<{ readonly cui: string; readonly fiscal_status: FiscalStatus | null }>>
  readonly saveCheck: (tenant: Tenant, contactId: string, claim: string, outcome: CheckOutcome) => Effect.Effect<void>
  readonly openInvoices: (tenant: Tenant, contactId: string) => Effect.Effect<ReadonlyArray<OpenInvoice>>
  readonly insertSnapshot: (tenant: Tenant, snapshot: FiscalSnapshot) => Effect.Effect<void>
  /** The contact's snapshots, newest first. */
  readonly history: (tenant: Tenant, contactId: string, page: PageRequest) => Effect.Effect<Page<FiscalSnapshot>>
}, /** The monitor's: one pass finds, claims and releases due contacts across every organization (or the one given). */
  "timeZonesWithCandidates" | "claim" | "release">>()("@opsplatform/core/fiscal/FiscalRepo") {
  static readonly layerSql: Layer.Layer<FiscalRepo, never, SqlClient.SqlClient> = Layer.effect(
    FiscalRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const snapshots = tenantTable(sql, { name: "contact_fiscal_snapshots", row: SnapshotRow })
      const contacts = tenantTable(sql, { name: "contacts", row: CheckedRow })
      const claimed = table(sql, { name: "contacts", row: ClaimedRow })
      const invoices = tenantTable(sql, { name: "invoices", row: OpenInvoiceRow })
      const encodeStatus = Schema.encodeSync(Json(FiscalStatus))

      const candidate = sql`c.country = 'RO' AND c.vat_number IS NOT NULL AND c.kind <> 'supplier'
        AND EXISTS (SELECT 1 FROM invoices i WHERE i.contact_id = c.id AND i.status IN ('SENT', 'PARTIALLY_PAID'))`
      /** One organization's rows, or (none given) every organization's. */
      const ofOrganization = (column: string, organizationId: string | undefined) =>
        organizationId === undefined ? [] : [sql`${sql(column)} = ${organizationId}`]

      return FiscalRepo.of({
        timeZonesWithCandidates: (organizationId) =>
          orDie(sql<{ readonly time_zone: string }>`SELECT DISTINCT o.time_zone FROM organizations o
            WHERE ${sql.and([
              ...ofOrganization("o.id", organizationId),
              sql`EXISTS (SELECT 1 FROM contacts c WHERE c.organization_id = o.id AND ${candidate})`
            ])}
            ORDER BY o.time_zone`).pipe(Effect.map((rows) => rows.map((r) => r.time_zone))),
        claim: ({ at, claim, limit, organizationId, timeZone, today, until }) =>
          // SKIP LOCKED: contacts another process is claiming (or a request is changing) are left to it or the next pass.
          claimed.all(sql`WITH claimed AS (UPDATE contacts SET fiscal_claim = ${claim}, fiscal_claimed_until = ${until}
            WHERE id IN (
              SELECT c.id FROM contacts c JOIN organizations o ON o.id = c.organization_id
              WHERE ${sql.and([sql`o.time_zone = ${timeZone}`, ...ofOrganization("c.organization_id", organizationId), candidate])}
                AND c.fiscal_check_date IS DISTINCT FROM ${today}::date
                AND (c.fiscal_claimed_until IS NULL OR c.fiscal_claimed_until < ${at}::timestamptz)
              ORDER BY c.id
              LIMIT ${limit}
              FOR UPDATE OF c SKIP LOCKED)
            RETURNING id, organization_id, environment, vat_number)
            SELECT * FROM claimed ORDER BY id`).pipe(
            Effect.map((rows) =>
              rows.map((r): ClaimedContact => ({
                tenant: { organizationId: r.organization_id, environment: r.environment },
                contactId: r.id,
                cui: r.vat_number
              }))
            )
          ),
        release: (claim) =>
          orDie(sql`UPDATE contacts SET fiscal_claim = NULL, fiscal_claimed_until = NULL WHERE fiscal_claim = ${claim}`).pipe(
            Effect.asVoid
          ),
        lockClaimed: (tenant, contactId, claim) =>
          contacts.find(tenant, [sql`id = ${contactId}`, sql`fiscal_claim = ${claim}`], { forUpdate: true }).pipe(
            Effect.map(Option.map((row) => ({ cui: row.vat_number, fiscal_status: row.fiscal_status })))
          ),
        saveCheck: (tenant, contactId, claim, outcome) =>
          orDie(sql`UPDATE contacts SET ${
            sql.update({
              fiscal_check_date: outcome.check_date,
              fiscal_claim: null,
              fiscal_claimed_until: null,
              ...(outcome.answered === undefined ? {} : {
                fiscal_status: encodeStatus(outcome.answered.status),
                fiscal_checked_at: outcome.answered.checked_at
              })
            })
          } WHERE ${contacts.where(tenant, [sql`id = ${contactId}`, sql`fiscal_claim = ${claim}`])}`).pipe(Effect.asVoid),
        openInvoices: (tenant, contactId) =>
          invoices.all(sql`SELECT id, currency, GREATEST(0, total_minor - credited_minor - paid_minor) AS remaining_minor,
              exchange_rate_ron
            FROM invoices WHERE ${invoices.where(tenant, [sql`contact_id = ${contactId}`, sql`status IN ('SENT', 'PARTIALLY_PAID')`])}
            ORDER BY id`),
        insertSnapshot: (tenant, snapshot) => orDie(snapshots.insert(tenant, snapshot)),
        history: (tenant, contactId, page) => snapshots.page(tenant, [sql`contact_id = ${contactId}`], page)
      })
    })
  )
}
