import { Layer } from "effect"
import { Digest, Kdf, SecureRandom, Aead, Mac } from "effect/crypto"
import { CoreLayers, DeliverySignal, Ids, RateLimiter, SecretBox, Secrets, WebhookTransport } from "@opsplatform/core"
import { IdempotencyRepoMemory } from "./idempotency.ts"
import { MemoryStore } from "./MemoryStore.ts"
import { ContractRepoMemory, NotifierRecording, ObligationRepoMemory } from "./obligations.ts"
import { OAuthAppRepoMemory, OAuthGrantRepoMemory, OAuthSessionRepoMemory } from "./oauth.ts"
import { CredentialRepoMemory, ExpenseRepoMemory, LocationRepoMemory, TenancyRepoMemory } from "./repos.ts"
import { CostingSettingsRepoMemory, RouteRepoMemory } from "./routes.ts"
import { DeliveryRepoMemory, OutboxMemory, WebhookRepoMemory } from "./webhooks.ts"

export { MemoryStore } from "./MemoryStore.ts"
export * from "./idempotency.ts"
export * from "./obligations.ts"
export * from "./oauth.ts"
export * from "./repos.ts"
export * from "./routes.ts"
export * from "./webhooks.ts"

/** Every storage port in memory, sharing one MemoryStore (the twin of `CoreLayers.SqlStorage`). */
export const MemoryStorage: Layer.Layer<CoreLayers.StoragePorts | MemoryStore, never, Ids.Ids> = Layer.mergeAll(
  TenancyRepoMemory,
  CredentialRepoMemory,
  LocationRepoMemory,
  ExpenseRepoMemory,
  OutboxMemory,
  IdempotencyRepoMemory,
  ContractRepoMemory,
  ObligationRepoMemory,
  NotifierRecording,
  RouteRepoMemory,
  CostingSettingsRepoMemory,
  RateLimiter.RateLimiter.layerMemory,
  OAuthAppRepoMemory,
  OAuthGrantRepoMemory,
  OAuthSessionRepoMemory,
  WebhookRepoMemory,
  DeliveryRepoMemory,
  MemoryStore.transactor
).pipe(Layer.provideMerge(DeliverySignal.DeliverySignal.layer), Layer.provideMerge(MemoryStore.layer))

/** Web Crypto implementations of the crypto services: they run on every runtime. */
export const WebCryptoLive = Layer.mergeAll(
  Digest.layerWebCrypto,
  Kdf.layerWebCrypto,
  SecureRandom.layerWebCrypto,
  Aead.layerWebCrypto,
  Mac.layerWebCrypto
).pipe(Layer.provideMerge(SecureRandom.layerWebCrypto))

/** The operator key of tests and examples: fixed, so sealed secrets open across layers built in one run. */
export const testOperatorKey: Uint8Array = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff)

/** A SecretBox under `testOperatorKey`. */
export const TestSecretBox = SecretBox.SecretBox.layer(testOperatorKey).pipe(Layer.provide(WebCryptoLive))

/** Cheap low-entropy hashing so tests that set PINs and passwords stay fast. */
export const FastHashing = Layer.succeed(Secrets.LowEntropyHashCost, {
  argon2: { memory: 256, passes: 1, parallelism: 1 },
  pbkdf2Iterations: 1_000
})

/**
 * Every domain service on memory storage: what a test or an embedding host
 * needs to use core with nothing else installed. Ids are sequential unless
 * `ids` is given.
 */
export const MemoryCore = (options?: {
  readonly ids?: Layer.Layer<Ids.Ids> | undefined
  /** The webhook transport (DNS and sending); by default an offline one. */
  readonly webhookTransport?: Layer.Layer<WebhookTransport.WebhookTransport> | undefined
}) =>
  CoreLayers.Services.pipe(
    Layer.provideMerge(MemoryStorage),
    Layer.provideMerge(TestSecretBox),
    Layer.provideMerge(options?.webhookTransport ?? WebhookTransport.WebhookTransport.layerOffline),
    Layer.provideMerge(options?.ids ?? Ids.Ids.layerSequential()),
    Layer.provideMerge(WebCryptoLive),
    Layer.provideMerge(FastHashing)
  )
