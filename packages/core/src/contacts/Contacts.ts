import { Context, Effect, Layer } from "effect"
import type { Conflict, NotFound } from "../shared/errors.ts"
import { ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { ContactRepo } from "./ContactRepo.ts"
import { type Contact, type ContactCreate, type ContactFilter, ContactId, type ContactUpdate } from "./model.ts"
import { normalizeVatNumber, searchedVatNumber, vatNumberIssue } from "./rules.ts"

/** The VAT number as stored, checked against the contact's country. */
const checkedVatNumber = (contact: Contact): Effect.Effect<Contact, ValidationFailed> => {
  if (contact.vat_number === null) return Effect.succeed(contact)
  const normalized = normalizeVatNumber(contact.country, contact.vat_number)
  return normalized === undefined
    ? Effect.fail(ValidationFailed.field("vat_number", vatNumberIssue(contact.country)))
    : Effect.succeed({ ...contact, vat_number: normalized })
}

/** Customers and suppliers of an organization environment. */
export class Contacts extends Context.Service<Contacts, {
  readonly create: (tenant: Tenant, input: ContactCreate) => Effect.Effect<Contact, ValidationFailed | Conflict>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Contact, NotFound>
  readonly list: (tenant: Tenant, filter: ContactFilter, page: PageRequest) => Effect.Effect<Page<Contact>>
  readonly update: (tenant: Tenant, id: string, patch: ContactUpdate) => Effect.Effect<Contact, NotFound | ValidationFailed | Conflict>
  /** Refused (Conflict) while invoices name the contact. */
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound | Conflict>
}>()("@opsplatform/core/contacts/Contacts") {
  static readonly layer: Layer.Layer<Contacts, never, ContactRepo | Ids> = Layer.effect(
    Contacts,
    Effect.gen(function*() {
      const repo = yield* ContactRepo
      const ids = yield* Ids
      const get = (tenant: Tenant, id: string) => findOr404("contact", id, (id) => repo.find(tenant, id))

      return Contacts.of({
        create: Effect.fn("Contacts.create")(function*(tenant, input) {
          const now = yield* nowIso
          const contact = yield* checkedVatNumber({
            id: yield* newId(ids, ContactId),
            name: input.name.trim(),
            kind: input.kind,
            country: input.country ?? "RO",
            vat_number: input.vat_number ?? null,
            registration_number: input.registration_number ?? null,
            address: input.address ?? null,
            email: input.email ?? null,
            phone: input.phone ?? null,
            fiscal_status: null,
            fiscal_checked_at: null,
            created_at: now,
            updated_at: now
          })
          yield* repo.insert(tenant, contact)
          return contact
        }),
        get,
        list: (tenant, filter, page) =>
          // A VAT filter finds the contact however its number was written ("RO 1859" or "1859").
          repo.list(
            tenant,
            filter.vat_number === undefined ? filter : { ...filter, vat_number: searchedVatNumber(filter.vat_number) },
            page
          ),
        update: Effect.fn("Contacts.update")(function*(tenant, id, patch) {
          const current = yield* get(tenant, id)
          const next = yield* checkedVatNumber({
            ...current,
            ...patch,
            name: patch.name === undefined ? current.name : patch.name.trim(),
            updated_at: yield* nowIso
          })
          yield* repo.update(tenant, next)
          return next
        }),
        remove: Effect.fn("Contacts.remove")(function*(tenant, id) {
          yield* get(tenant, id)
          yield* repo.remove(tenant, id)
        })
      })
    })
  )
}
