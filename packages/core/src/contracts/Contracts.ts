import { Context, Effect, Layer, Option } from "effect"
import { NotFound } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isUuid } from "../shared/schemas.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { ContractRepo } from "./ContractRepo.ts"
import { type Contract, type ContractCreate, ContractId, type ContractUpdate } from "./model.ts"

/** The contracts registry obligations hang from. */
export class Contracts extends Context.Service<Contracts, {
  readonly create: (tenant: Tenant, input: ContractCreate) => Effect.Effect<Contract>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Contract, NotFound>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<Contract>>
  readonly update: (tenant: Tenant, id: string, patch: ContractUpdate) => Effect.Effect<Contract, NotFound>
}>()("@opsplatform/core/contracts/Contracts") {
  static readonly layer: Layer.Layer<Contracts, never, ContractRepo | Ids | Transactor> = Layer.effect(
    Contracts,
    Effect.gen(function*() {
      const repo = yield* ContractRepo
      const ids = yield* Ids
      const tx = yield* Transactor

      // A malformed id is as unknown as any other id.
      const get = (tenant: Tenant, id: string) =>
        (isUuid(id) ? repo.find(tenant, id) : Effect.succeedNone).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ resource: "contract", id })),
            onSome: Effect.succeed
          }))
        )

      return Contracts.of({
        create: Effect.fn("Contracts.create")(function*(tenant, input) {
          const now = yield* nowIso
          const contract: Contract = { id: yield* newId(ids, ContractId), name: input.name.trim(), created_at: now, updated_at: now }
          yield* repo.insert(tenant, contract)
          return contract
        }),
        get,
        list: (tenant, page) => repo.list(tenant, page),
        update: Effect.fn("Contracts.update")(function*(tenant, id, patch) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* get(tenant, id)
            const next: Contract = {
              ...current,
              name: patch.name === undefined ? current.name : patch.name.trim(),
              updated_at: yield* nowIso
            }
            yield* repo.update(tenant, next)
            return next
          }))
        })
      })
    })
  )
}
