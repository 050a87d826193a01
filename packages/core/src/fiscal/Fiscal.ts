import { Context, Effect, Layer } from "effect"
import { ContactRepo } from "../contacts/ContactRepo.ts"
import type { NotFound } from "../shared/errors.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { FiscalRepo } from "./FiscalRepo.ts"
import type { FiscalSnapshot } from "./model.ts"

/** A contact's fiscal status over time, as the daily check recorded it. */
export class Fiscal extends Context.Service<Fiscal, {
  /** The contact's snapshots, newest first; 404 for a contact the tenant does not have. */
  readonly history: (tenant: Tenant, contactId: string, page: PageRequest) => Effect.Effect<Page<FiscalSnapshot>, NotFound>
}>()("@opsplatform/core/fiscal/Fiscal") {
  static readonly layer: Layer.Layer<Fiscal, never, FiscalRepo | ContactRepo> = Layer.effect(
    Fiscal,
    Effect.gen(function*() {
      const repo = yield* FiscalRepo
      const contacts = yield* ContactRepo
      return Fiscal.of({
        history: Effect.fn("Fiscal.history")(function*(tenant, contactId, page) {
          yield* findOr404("contact", contactId, (id) => contacts.find(tenant, id))
          return yield* repo.history(tenant, contactId, page)
        })
      })
    })
  )
}
