import { Effect, Layer, Option } from "effect"
import { contactConflicts, ContactRepo } from "@opsplatform/core/contacts/ContactRepo"
import { type Contact, ContactFilter } from "@opsplatform/core/contacts/model"
import type { InvoiceRecord } from "@opsplatform/core/invoices/model"
import type { Subscription } from "@opsplatform/core/metering/model"
import { Conflict } from "@opsplatform/core/shared/errors"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"

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
    return ContactRepo.of({
      insert: (tenant, c) => Effect.andThen(check(tenant, c), Effect.sync(() => contacts.insert(tenant, c))),
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
      remove: (tenant, id) =>
        // The foreign keys of invoices and subscriptions: a contact they name stays.
        invoices.filter(tenant, (i) => i.contact_id === id).length > 0
          ? Effect.fail(new Conflict({ reason: contactConflicts.invoices_contact_id_fkey }))
          : subscriptions.filter(tenant, (s) => s.contact_id === id).length > 0
          ? Effect.fail(new Conflict({ reason: contactConflicts.subscriptions_contact_id_fkey }))
          : Effect.sync(() => contacts.remove(tenant, id))
    })
  })
)
