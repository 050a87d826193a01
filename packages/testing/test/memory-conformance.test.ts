import { Effect } from "effect"
import { Ids } from "@opsplatform/core"
import { forwardingConformance, storageConformance, webhookStorageConformance } from "@opsplatform/testing/conformance"
import { MemoryStorage, MemoryStore } from "@opsplatform/testing"
import { Layer } from "effect"

storageConformance(
  "memory",
  MemoryStorage.pipe(Layer.provideMerge(Ids.Ids.layerSequential())),
  (organizationId, eventId) =>
    Effect.map(MemoryStore, (store) =>
      [...store.table<{ organizationId: string; eventId: string }>("outbox_events").values()].filter((e) =>
        e.organizationId === organizationId && e.eventId === eventId
      ).length)
)

webhookStorageConformance("memory", MemoryStorage.pipe(Layer.provideMerge(Ids.Ids.layerSequential())))

forwardingConformance("memory", MemoryStorage.pipe(Layer.provideMerge(Ids.Ids.layerSequential())))
