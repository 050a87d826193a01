import { Effect, Layer } from "effect"
import {
  claim,
  IdempotencyRepo,
  type IdempotencyRecord,
  type IdempotencyScope,
  outcomeOf
} from "@opsplatform/core/idempotency/IdempotencyRepo"
import { MemoryStore } from "./MemoryStore.ts"

const keyOf = (s: IdempotencyScope) => `${s.organizationId}/${s.environment}/${s.credentialId}/${s.key}`

export const IdempotencyRepoMemory: Layer.Layer<IdempotencyRepo, never, MemoryStore> = Layer.effect(
  IdempotencyRepo,
  Effect.map(MemoryStore, (store) => {
    const rows = store.table<IdempotencyRecord>("idempotency_keys")
    return IdempotencyRepo.of({
      begin: (scope, fingerprint, at, staleBefore) =>
        Effect.sync(() => {
          const k = keyOf(scope)
          const existing = rows.get(k)
          if (existing === undefined || existing.created_at < staleBefore) {
            rows.set(k, claim(scope, fingerprint, at))
            return { _tag: "Started" } as const
          }
          return outcomeOf(existing, fingerprint)
        }),
      complete: (scope, status, body) =>
        Effect.sync(() => {
          const existing = rows.get(keyOf(scope))
          if (existing) rows.set(keyOf(scope), { ...existing, status, body })
        }),
      abandon: (scope) => Effect.sync(() => void rows.delete(keyOf(scope)))
    })
  })
)
