import { Effect, Layer, Option } from "effect"
import { contactConflicts, ContactRepo } from "@opsplatform/core/contacts/ContactRepo"
import { type Contact, ContactFilter } from "@opsplatform/core/contacts/model"
import type { InvoiceRecord } from "@opsplatform/core/invoices/model"
import type { Subscription } from "@opsplatform/core/metering/model"
import { Conflict } from "@opsplatform/core/shared/errors"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable, sortedById } from "./rows.ts"

export const ContactRepoMemory: Layer.Layer<ContactRepo, never, MemoryStore> = Layer.effect(
  ContactRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const contacts = memoryTenantTable<Contact>(store, "contacts")
    const invoices = memoryTenantTable<InvoiceRecord>(store, "invoices")
    const subscriptions = memoryTenantTable<Subscription>(store, "subscriptions")
    // The unique index of the SQL schema: one contact per VAT number and country in a tenant.
    const check = (tenant: Tenant, c: Contact) =>
      c.vat_number !== null &&
        contacts.filter(tenant, (o) => o.id !== c.id && o.country === c.country && o.vat_number === c.vat_number).length > 0
        ? Effect.fail(new Conflict({ reason: contactConflicts.contacts_vat_number_unique }))
        : Effect.void
    const insert = (tenant: Tenant, c: Contact) => Effect.andThen(check(tenant, c), Effect.sync(() => contacts.insert(tenant, c)))
    // The foreign keys of invoices and subscriptions: a contact they name stays, and so do the others with it.
    const inUse = (tenant: Tenant, ids: ReadonlyArray<string>) => {
      const wanted = new Set(ids)
      return invoices.filter(tenant, (i) => wanted.has(i.contact_id)).length > 0
        ? Effect.fail(new Conflict({ reason: contactConflicts.invoices_contact_id_fkey }))
        : subscriptions.filter(tenant, (s) => wanted.has(s.contact_id)).length > 0
        ? Effect.fail(new Conflict({ reason: contactConflicts.subscriptions_contact_id_fkey }))
        : Effect.void
    }
    return ContactRepo.of({
      insert,
      update: (tenant, c) =>
        Effect.andThen(
          check(tenant, c),
          Effect.sync(() => {
            // The SQL layer's fixed columns: only the fiscal check writes the fiscal status.
            const stored = Option.getOrUndefined(contacts.find(tenant, c.id))
            if (stored === undefined) return
            contacts.update(tenant, { ...c, fiscal_status: stored.fiscal_status, fiscal_checked_at: stored.fiscal_checked_at })
          })
        ),
      find: (tenant, id) => Effect.sync(() => contacts.find(tenant, id)),
      list: (tenant, f, page) =>
        Effect.sync(() =>
          contacts.page(
            tenant,
            filterPredicates(ContactFilter, f),
            page
          )
        ),
      remove: (tenant, id) => Effect.andThen(inUse(tenant, [id]), Effect.sync(() => contacts.remove(tenant, id))),
      insertAll: (tenant, list) => Effect.forEach(list, (c) => insert(tenant, c), { discard: true }),
      // Memory transactions run one at a time, so reading is already exclusive.
      lockAll: (tenant, ids) => Effect.sync(() => sortedById(ids.flatMap((id) => Option.toArray(contacts.find(tenant, id))))),
      removeAll: (tenant, ids) =>
        Effect.andThen(inUse(tenant, ids), Effect.sync(() => ids.forEach((id) => contacts.remove(tenant, id)))),
      findByVatNumbers: (tenant, keys) =>
        Effect.sync(() => {
          const wanted = new Set(keys.map((k) => `${k.country}\u0000${k.vat_number}`))
          return contacts.filter(tenant, (c) => c.vat_number !== null && wanted.has(`${c.country}\u0000${c.vat_number}`))
        })
    })
  })
)
