import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { LocationRepo } from "@opsplatform/core/locations/LocationRepo"
import { type Location, LocationId } from "@opsplatform/core/locations/model"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { CoreLayers } from "@opsplatform/core"
import { freshOrganization, timestamps } from "./support.ts"

const location = (id: string, at: string, overrides: Partial<Location> = {}): Location => ({
  id: LocationId.make(id),
  name: `Site ${id.slice(-4)}`,
  code: null,
  vertical_type: "retail",
  is_primary: false,
  address: null,
  latitude: null,
  longitude: null,
  created_at: at,
  updated_at: at,
  ...overrides
})

/** The LocationRepo contract: every implementation must pass it unchanged. */
export const locationRepoConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
) =>
  describe(`LocationRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("stores, finds, updates and removes within one tenant", () =>
        Effect.gen(function*() {
          const repo = yield* LocationRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const l = location(yield* ids.uuid, t0!, { code: "HQ", latitude: 44.43, longitude: 26.1 })
          yield* repo.insert(org.live, l)
          assert.deepStrictEqual(yield* repo.find(org.live, l.id), Option.some(l))
          const renamed = { ...l, name: "Renamed", updated_at: t1! }
          yield* repo.update(org.live, renamed)
          assert.deepStrictEqual(yield* repo.find(org.live, l.id), Option.some(renamed))
          assert.isTrue(yield* repo.remove(org.live, l.id))
          assert.isTrue(Option.isNone(yield* repo.find(org.live, l.id)))
          assert.isFalse(yield* repo.remove(org.live, l.id))
        }))

      it.effect("never shows a row to another organization or environment", () =>
        Effect.gen(function*() {
          const repo = yield* LocationRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const l = location(yield* ids.uuid, timestamps(1)[0]!)
          yield* repo.insert(a.live, l)
          assert.isTrue(Option.isNone(yield* repo.find(a.sandbox, l.id)))
          assert.isTrue(Option.isNone(yield* repo.find(b.live, l.id)))
          assert.isFalse(yield* repo.remove(b.live, l.id))
          const page = yield* pageRequest({})
          assert.strictEqual((yield* repo.list(a.sandbox, {}, page)).meta.total, 0)
          assert.strictEqual((yield* repo.list(b.live, {}, page)).meta.total, 0)
          // An update aimed at the wrong tenant changes nothing.
          yield* repo.update(b.live, { ...l, name: "Hijacked" })
          assert.strictEqual(Option.getOrThrow(yield* repo.find(a.live, l.id)).name, l.name)
        }))

      it.effect("refuses a second primary location in the same tenant, allows one per environment", () =>
        Effect.gen(function*() {
          const repo = yield* LocationRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1, t2] = timestamps(3)
          yield* repo.insert(org.live, location(yield* ids.uuid, t0!, { is_primary: true }))
          const second = location(yield* ids.uuid, t1!, { is_primary: true })
          const refused = yield* Effect.flip(repo.insert(org.live, second))
          assert.strictEqual(refused._tag, "Conflict")
          assert.isTrue(Option.isNone(yield* repo.find(org.live, second.id)))
          yield* repo.insert(org.sandbox, location(yield* ids.uuid, t2!, { is_primary: true }))
          yield* repo.clearPrimary(org.live, second.id, t2!)
          yield* repo.insert(org.live, second)
          const primaries = (yield* repo.list(org.live, { is_primary: true }, yield* pageRequest({}))).items
          assert.deepStrictEqual(primaries.map((p) => p.id), [second.id])
        }))

      it.effect("refuses a duplicate code in a tenant, whatever its letter case", () =>
        Effect.gen(function*() {
          const repo = yield* LocationRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          yield* repo.insert(org.live, location(yield* ids.uuid, t0!, { code: "WH-1" }))
          const clash = yield* Effect.flip(repo.insert(org.live, location(yield* ids.uuid, t1!, { code: "wh-1" })))
          assert.strictEqual(clash._tag, "Conflict")
          yield* repo.insert(org.sandbox, location(yield* ids.uuid, t1!, { code: "WH-1" }))
        }))

      it.effect("lists newest first with offset pages and keyset cursors that agree", () =>
        Effect.gen(function*() {
          const repo = yield* LocationRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const at = timestamps(7)
          const made: Array<Location> = []
          for (const t of at) {
            const l = location(yield* ids.uuid, t, { vertical_type: made.length % 2 === 0 ? "retail" : "office" })
            made.push(l)
            yield* repo.insert(org.live, l)
          }
          const newestFirst = [...made].reverse().map((l) => l.id)
          const first = yield* repo.list(org.live, {}, yield* pageRequest({ perPage: 3 }))
          assert.deepStrictEqual(first.items.map((l) => l.id), newestFirst.slice(0, 3))
          assert.deepStrictEqual(
            { page: first.meta.page, perPage: first.meta.perPage, total: first.meta.total, totalPages: first.meta.totalPages },
            { page: 1, perPage: 3, total: 7, totalPages: 3 }
          )
          assert.isNotNull(first.meta.nextCursor)
          const second = yield* repo.list(org.live, {}, yield* pageRequest({ perPage: 3, cursor: first.meta.nextCursor! }))
          const secondByOffset = yield* repo.list(org.live, {}, yield* pageRequest({ perPage: 3, page: 2 }))
          assert.deepStrictEqual(second.items.map((l) => l.id), newestFirst.slice(3, 6))
          assert.deepStrictEqual(secondByOffset.items.map((l) => l.id), newestFirst.slice(3, 6))
          assert.strictEqual(second.meta.page, 2)
          const third = yield* repo.list(org.live, {}, yield* pageRequest({ perPage: 3, cursor: second.meta.nextCursor! }))
          assert.deepStrictEqual(third.items.map((l) => l.id), newestFirst.slice(6))
          assert.isNull(third.meta.nextCursor)
          const offices = yield* repo.list(org.live, { vertical_type: "office" }, yield* pageRequest({}))
          assert.deepStrictEqual(offices.items.map((l) => l.id), newestFirst.filter((id) => made.find((m) => m.id === id)!.vertical_type === "office"))
        }))

      it.effect("orders rows created in the same millisecond by id, without skipping any across pages", () =>
        Effect.gen(function*() {
          const repo = yield* LocationRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t] = timestamps(1)
          const made: Array<string> = []
          for (let i = 0; i < 5; i++) {
            const l = location(yield* ids.uuid, t!)
            made.push(l.id)
            yield* repo.insert(org.live, l)
          }
          const seen: Array<string> = []
          let page = yield* pageRequest({ perPage: 2 })
          for (;;) {
            const result = yield* repo.list(org.live, {}, page)
            seen.push(...result.items.map((l) => l.id))
            if (result.meta.nextCursor === null) break
            page = yield* pageRequest({ perPage: 2, cursor: result.meta.nextCursor })
          }
          assert.deepStrictEqual(seen, [...made].sort().reverse())
        }))
    })
  })
