import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { AuditRepo } from "@opsplatform/core/audit/AuditRepo"
import { type AuditEvent, AuditEventId } from "@opsplatform/core/audit/model"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import { freshOrganization, timestamps } from "./support.ts"

/** The AuditRepo contract: append-only, one log per organization environment, filtered in the store. */
export const auditRepoConformance = (name: string, storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>) =>
  describe(`AuditRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("appends, lists newest first, filters by action, device and time, and keeps logs apart", () =>
        Effect.gen(function*() {
          const repo = yield* AuditRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const device = yield* ids.uuid
          const at = timestamps(3)
          const event = (action: string, created_at: string, device_id: string | null): Effect.Effect<AuditEvent> =>
            Effect.map(ids.uuid, (id) => ({
              id: AuditEventId.make(id),
              action,
              outcome: "success",
              actor_credential_id: null,
              actor_organization_id: a.id,
              resource_type: "device",
              resource_id: device_id,
              device_id,
              request_id: "req_1",
              details: { attempts: 1, ok: true, note: null },
              created_at
            }))
          const first = yield* event("display.unlock", at[0]!, device)
          const second = yield* event("grant.approve", at[1]!, null)
          const third = yield* event("display.unlock", at[2]!, device)
          for (const e of [first, second, third]) yield* repo.append(a.live, e)
          const page = yield* pageRequest({})
          assert.deepStrictEqual((yield* repo.list(a.live, {}, page)).items, [third, second, first])
          assert.deepStrictEqual((yield* repo.list(a.live, { action: "display.unlock" }, page)).items.map((e) => e.id), [third.id, first.id])
          assert.deepStrictEqual((yield* repo.list(a.live, { device_id: device, from: at[1]! }, page)).items.map((e) => e.id), [third.id])
          assert.deepStrictEqual((yield* repo.list(a.live, { to: at[1]! }, page)).items.map((e) => e.id), [first.id])
          assert.strictEqual((yield* repo.list(a.sandbox, {}, page)).meta.total, 0)
          assert.strictEqual((yield* repo.list(b.live, {}, page)).meta.total, 0)
        }))
    })
  })
