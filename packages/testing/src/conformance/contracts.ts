import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { ContractRepo } from "@opsplatform/core/contracts/ContractRepo"
import { type Contract, ContractId } from "@opsplatform/core/contracts/model"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import { freshOrganization, timestamps } from "./support.ts"

const contract = (id: string, name: string, at: string): Contract => ({
  id: ContractId.make(id),
  name,
  created_at: at,
  updated_at: at
})

/** The ContractRepo contract: every implementation must pass it unchanged. */
export const contractRepoConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
) =>
  describe(`ContractRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("keeps contracts per tenant and renames them", () =>
        Effect.gen(function*() {
          const contracts = yield* ContractRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const [t0, t1, t2] = timestamps(3)
          const first = contract(yield* ids.uuid, "First", t0!)
          const second = contract(yield* ids.uuid, "Second", t1!)
          yield* contracts.insert(a.live, first)
          yield* contracts.insert(a.live, second)
          assert.deepStrictEqual(yield* contracts.find(a.live, first.id), Option.some(first))
          yield* contracts.update(a.live, { ...first, name: "Renamed", updated_at: t2! })
          assert.strictEqual(Option.getOrThrow(yield* contracts.find(a.live, first.id)).name, "Renamed")
          const page = yield* contracts.list(a.live, yield* pageRequest({}))
          assert.deepStrictEqual(page.items.map((c) => c.id), [second.id, first.id])
          assert.isTrue(Option.isNone(yield* contracts.find(a.sandbox, first.id)))
          assert.isTrue(Option.isNone(yield* contracts.find(b.live, first.id)))
          yield* contracts.update(b.live, { ...first, name: "Hijacked" })
          assert.strictEqual(Option.getOrThrow(yield* contracts.find(a.live, first.id)).name, "Renamed")
          assert.strictEqual((yield* contracts.list(b.live, yield* pageRequest({}))).meta.total, 0)
        }))
    })
  })
