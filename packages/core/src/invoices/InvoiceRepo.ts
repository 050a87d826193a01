import { Context, Effect, Layer, type Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, NullableTimestamp, Numeric, Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, type FindOptions, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import {
  CreditNoteRecord,
  CreditNoteFilter,
  InvoiceFilter,
  InvoiceRecord,
  StoredLine
} from "./model.ts"

export const invoiceConflicts = {
  invoices_number_unique: "Another invoice already has this number",
  credit_notes_number_unique: "Another credit note already has this number"
}

const Lines = Json(Schema.Array(StoredLine))

export const InvoiceRow = InvoiceRecord.mapFields(Struct.assign({
  lines: Lines,
  subtotal_minor: Numeric,
  vat_minor: Numeric,
  total_minor: Numeric,
  credited_minor: Numeric,
  paid_minor: Numeric,
  issued_at: NullableTimestamp,
  voided_at: NullableTimestamp,
  paid_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}))

export const CreditNoteRow = CreditNoteRecord.mapFields(Struct.assign({
  lines: Schema.NullOr(Lines),
  amount_minor: Numeric,
  issued_at: Timestamp,
  cancelled_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}))

/**
 * Storage port for invoices, their per-series numbering and their credit
 * notes. `nextNumber` hands out the next number of a series inside the
 * caller's transaction: concurrent issuers wait for each other, and a
 * rolled-back issue gives its number back, so a series has no gaps.
 */
export class InvoiceRepo extends Context.Service<InvoiceRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, invoice: InvoiceRecord) => Effect.Effect<void>
  readonly update: (tenant: Tenant, invoice: InvoiceRecord) => Effect.Effect<void, Conflict>
  readonly find: (tenant: Tenant, id: string, options?: FindOptions) => Effect.Effect<Option.Option<InvoiceRecord>>
  /** `today` is the organization's date, for the `overdue` filter. */
  readonly list: (tenant: Tenant, filter: InvoiceFilter, today: string, page: PageRequest) => Effect.Effect<Page<InvoiceRecord>>
  readonly nextNumber: (tenant: Tenant, series: string) => Effect.Effect<number>
  readonly insertCreditNote: (tenant: Tenant, note: CreditNoteRecord) => Effect.Effect<void, Conflict>
  readonly updateCreditNote: (tenant: Tenant, note: CreditNoteRecord) => Effect.Effect<void>
  readonly findCreditNote: (tenant: Tenant, id: string, options?: FindOptions) => Effect.Effect<Option.Option<CreditNoteRecord>>
  readonly listCreditNotes: (tenant: Tenant, filter: CreditNoteFilter, page: PageRequest) => Effect.Effect<Page<CreditNoteRecord>>
}>>()("@opsplatform/core/invoices/InvoiceRepo") {
  static readonly layerSql: Layer.Layer<InvoiceRepo, never, SqlClient.SqlClient> = Layer.effect(
    InvoiceRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(invoiceConflicts)
      const invoices = tenantTable(sql, { name: "invoices", row: InvoiceRow })
      const notes = tenantTable(sql, { name: "credit_notes", row: CreditNoteRow })
      return InvoiceRepo.of({
        insert: (tenant, invoice) => orDie(invoices.insert(tenant, invoice)),
        update: (tenant, invoice) => conflicts(invoices.update(tenant, invoice)).pipe(Effect.asVoid),
        find: (tenant, id, options) => invoices.findById(tenant, id, options),
        list: (tenant, f, today, page) =>
          invoices.page(tenant, filterConditions(sql, InvoiceFilter, f, {
            overdue: (overdue) => {
              const due = sql`status IN ('SENT', 'PARTIALLY_PAID') AND due_date < ${today}`
              return overdue ? due : sql`NOT (${due})`
            }
          }), page),
        nextNumber: (tenant, series) =>
          orDie(sql<{ readonly last_number: number }>`INSERT INTO invoice_series (organization_id, environment, series, last_number)
            VALUES (${tenant.organizationId}, ${tenant.environment}, ${series}, 1)
            ON CONFLICT (organization_id, environment, series)
            DO UPDATE SET last_number = invoice_series.last_number + 1
            RETURNING last_number`).pipe(Effect.map((rows) => Number(rows[0]!.last_number))),
        insertCreditNote: (tenant, note) => conflicts(notes.insert(tenant, note)),
        updateCreditNote: (tenant, note) => orDie(notes.update(tenant, note)).pipe(Effect.asVoid),
        findCreditNote: (tenant, id, options) => notes.findById(tenant, id, options),
        listCreditNotes: (tenant, f, page) =>
          notes.page(tenant, filterConditions(sql, CreditNoteFilter, f), page)
      })
    })
  )
}
