import { Effect, Layer } from "effect"
import { IdempotencyRepo, type IdempotencyScope } from "@opsplatform/core/idempotency/IdempotencyRepo"
import { MemoryStore } from "./MemoryStore.ts"

interface Row {
  readonly fingerprint: string
  readonly status: number | null
  readonly body: string | null
  readonly created_at: string
}

const keyOf = (s: IdempotencyScope) => `${s.organizationId}/${s.environment}/${s.credentialId}/${s.key}`

export const IdempotencyRepoMemory: Layer.Layer<IdempotencyRepo, never, MemoryStore> = Layer.effect(
  IdempotencyRepo,
  Effect.map(MemoryStore, (store) => {
    const rows = store.table<Row>("idempotency_keys")
    return IdempotencyRepo.of({
      begin: (scope, fingerprint, at, staleBefore) =>
        Effect.sync(() => {
          const k = keyOf(scope)
          const existing = rows.get(k)
          if (existing === undefined || existing.created_at < staleBefore) {
            rows.set(k, { fingerprint, status: null, body: null, created_at: at })
            return { _tag: "Started" } as const
          }
          if (existing.fingerprint !== fingerprint) return { _tag: "Mismatch" } as const
          if (existing.status === null) return { _tag: "InProgress" } as const
          return { _tag: "Replay", status: existing.status, body: existing.body ?? "" } as const
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
