import { Context, Effect, Layer, type Option, Schema, Struct } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { Json, NullableTimestamp, Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import type { BatchWrites, Tenant, TenantScoped } from "../shared/tenant.ts"
import { Contact, ContactFilter, FiscalStatus } from "./model.ts"

export const contactConflicts = {
  contacts_vat_number_unique: "Another contact already has this VAT number",
  invoices_contact_id_fkey: "This contact has invoices; it cannot be deleted",
  subscriptions_contact_id_fkey: "This contact has subscriptions; it cannot be deleted"
}

const ContactRow = Contact.mapFields(Struct.assign({
  fiscal_status: Schema.NullOr(Json(FiscalStatus)),
  fiscal_checked_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}))

/** What makes a contact unique in an organization environment: its VAT number in its country. */
interface VatNumberKey {
  readonly country: string
  readonly vat_number: string
}

/** Written only by the fiscal check (FiscalRepo), so an edit of the contact never overwrites a newer status. */
const fiscalFields = ["fiscal_status", "fiscal_checked_at"] as const

/**
 * Storage port for contacts. The store guarantees one contact per VAT number
 * (and country) in an organization environment, and refuses to delete a
 * contact that invoices or subscriptions name. `update` leaves the fiscal
 * status as stored.
 */
export class ContactRepo extends Context.Service<ContactRepo, TenantScoped<BatchWrites<Contact> & {
  readonly insert: (tenant: Tenant, contact: Contact) => Effect.Effect<void, Conflict>
  readonly update: (tenant: Tenant, contact: Contact) => Effect.Effect<void, Conflict>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<Contact>>
  readonly list: (tenant: Tenant, filter: ContactFilter, page: PageRequest) => Effect.Effect<Page<Contact>>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<boolean, Conflict>
  /** The tenant's contacts with any of these VAT numbers. */
  readonly findByVatNumbers: (tenant: Tenant, keys: ReadonlyArray<VatNumberKey>) => Effect.Effect<ReadonlyArray<Contact>>
}>>()("@opsplatform/core/contacts/ContactRepo") {
  static readonly layerSql: Layer.Layer<ContactRepo, never, SqlClient.SqlClient> = Layer.effect(
    ContactRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(contactConflicts)
      const contacts = tenantTable(sql, { name: "contacts", row: ContactRow, fixed: fiscalFields })
      const removeWhere = (tenant: Tenant, condition: Statement.Fragment) =>
        conflicts(sql`DELETE FROM contacts WHERE ${contacts.where(tenant, [condition])} RETURNING id`)
      return ContactRepo.of({
        insert: (tenant, c) => conflicts(contacts.insert(tenant, c)),
        update: (tenant, c) => conflicts(contacts.update(tenant, c)).pipe(Effect.asVoid),
        find: (tenant, id) => contacts.findById(tenant, id),
        list: (tenant, f, page) =>
          contacts.page(tenant, filterConditions(sql, ContactFilter, f), page),
        remove: (tenant, id) => Effect.map(removeWhere(tenant, sql`id = ${id}`), (rows) => rows.length > 0),
        insertAll: (tenant, list) => conflicts(contacts.insertAll(tenant, list)),
        lockAll: (tenant, ids) => contacts.findByIds(tenant, ids, { forUpdate: true }),
        removeAll: (tenant, ids) => ids.length === 0 ? Effect.void : Effect.asVoid(removeWhere(tenant, sql.in("id", ids))),
        // One JSON parameter, however many numbers; the condition is the unique index's (country, vat_number).
        findByVatNumbers: (tenant, keys) =>
          keys.length === 0 ? Effect.succeed([]) : contacts.findAll(tenant, [
            sql`(country, vat_number) IN (SELECT k->>0, k->>1 FROM jsonb_array_elements(${
              JSON.stringify(keys.map((k) => [k.country, k.vat_number]))
            }::jsonb) AS k)`
          ])
      })
    })
  )
}
