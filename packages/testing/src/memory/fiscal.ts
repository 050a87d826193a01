import { Effect, Layer, Option } from "effect"
import type { Contact } from "@opsplatform/core/contacts/model"
import { type ClaimedContact, FiscalRepo } from "@opsplatform/core/fiscal/FiscalRepo"
import type { FiscalSnapshot } from "@opsplatform/core/fiscal/model"
import type { InvoiceRecord } from "@opsplatform/core/invoices/model"
import { balanceOf } from "@opsplatform/core/invoices/rules"
import type { Organization } from "@opsplatform/core/tenancy/model"
import { MemoryStore } from "./MemoryStore.ts"
import { memoryTenantTable } from "./rows.ts"

/** The SQL layer's internal claim columns of a contact. */
interface CheckState {
  readonly check_date: string | null
  readonly claim: string | null
  readonly claimed_until: string | null
}

const open = (i: InvoiceRecord) => i.status === "SENT" || i.status === "PARTIALLY_PAID"

/** The memory twin of `FiscalRepo.layerSql`: the same candidates, due rule and claims. */
export const FiscalRepoMemory: Layer.Layer<FiscalRepo, never, MemoryStore> = Layer.effect(
  FiscalRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const contacts = memoryTenantTable<Contact>(store, "contacts")
    const invoices = memoryTenantTable<InvoiceRecord>(store, "invoices")
    const snapshots = memoryTenantTable<FiscalSnapshot>(store, "contact_fiscal_snapshots")
    const orgs = store.table<Organization>("organizations")
    const checks = store.table<CheckState>("contact_fiscal_checks")
    const stateOf = (id: string): CheckState => checks.get(id) ?? { check_date: null, claim: null, claimed_until: null }

    const isCandidate = (c: Contact) =>
      c.country === "RO" && c.vat_number !== null && c.kind !== "supplier" &&
      [...invoices.rows.values()].some((i) => i.contact_id === c.id && open(i))
    const candidates = (organizationId: string | undefined) =>
      [...contacts.rows.values()].filter((c) => (organizationId === undefined || c.organization_id === organizationId) && isCandidate(c))
    const claimedBy = (id: string, claim: string) => stateOf(id).claim === claim

    return FiscalRepo.of({
      timeZonesWithCandidates: (organizationId) =>
        Effect.sync(() => [...new Set(candidates(organizationId).map((c) => orgs.get(c.organization_id)!.time_zone))].sort()),
      claim: ({ at, claim, limit, organizationId, timeZone, today, until }) =>
        Effect.sync(() => {
          const due = candidates(organizationId)
            .filter((c) => {
              const state = stateOf(c.id)
              return orgs.get(c.organization_id)!.time_zone === timeZone && state.check_date !== today &&
                (state.claimed_until === null || state.claimed_until < at)
            })
            .sort((a, b) => (a.id < b.id ? -1 : 1))
            .slice(0, limit)
          return due.map((c): ClaimedContact => {
            checks.set(c.id, { ...stateOf(c.id), claim, claimed_until: until })
            return { tenant: { organizationId: c.organization_id, environment: c.environment }, contactId: c.id, cui: c.vat_number! }
          })
        }),
      release: (claim) =>
        Effect.sync(() => {
          for (const [id, state] of checks) if (state.claim === claim) checks.set(id, { ...state, claim: null, claimed_until: null })
        }),
      lockClaimed: (tenant, contactId, claim) =>
        Effect.sync(() =>
          Option.flatMap(contacts.find(tenant, contactId), (c) =>
            claimedBy(contactId, claim) && c.vat_number !== null
              ? Option.some({ cui: c.vat_number, fiscal_status: c.fiscal_status })
              : Option.none())
        ),
      saveCheck: (tenant, contactId, claim, outcome) =>
        Effect.sync(() => {
          const contact = contacts.find(tenant, contactId)
          if (Option.isNone(contact) || !claimedBy(contactId, claim)) return
          checks.set(contactId, { check_date: outcome.check_date, claim: null, claimed_until: null })
          if (outcome.answered !== undefined) {
            contacts.update(tenant, {
              ...contact.value,
              fiscal_status: outcome.answered.status,
              fiscal_checked_at: outcome.answered.checked_at
            })
          }
        }),
      openInvoices: (tenant, contactId) =>
        Effect.sync(() =>
          invoices.filter(tenant, (i) => i.contact_id === contactId && open(i))
            .sort((a, b) => (a.id < b.id ? -1 : 1))
            .map((i) => ({ currency: i.currency, remaining_minor: balanceOf(i).remaining_minor, exchange_rate_ron: i.exchange_rate_ron }))
        ),
      insertSnapshot: (tenant, snapshot) => Effect.sync(() => snapshots.insert(tenant, snapshot)),
      history: (tenant, contactId, page) => Effect.sync(() => snapshots.page(tenant, [(s) => s.contact_id === contactId], page))
    })
  })
)
