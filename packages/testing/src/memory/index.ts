import { Layer } from "effect"
import { Digest, Kdf, SecureRandom, Aead, Mac, Signature } from "effect/crypto"
import { CoreLayers, DeliverySignal, ForwardingSignal, Ids, RateLimiter, SecretBox, Secrets, WebhookFanOut, WebhookTransport } from "@opsplatform/core"
import { IdempotencyRepoMemory } from "./idempotency.ts"
import { MemoryStore } from "./MemoryStore.ts"
import { ContractRepoMemory } from "./contracts.ts"
import { NotifierRecording, ObligationRepoMemory } from "./obligations.ts"
import { OAuthAppRepoMemory, OAuthGrantRepoMemory, OAuthSessionRepoMemory } from "./oauth.ts"
import { AuditRepoMemory } from "./audit.ts"
import { CredentialRepoMemory } from "./auth.ts"
import { ContactRepoMemory } from "./contacts.ts"
import { CourtRepoMemory } from "./court.ts"
import { FleetRepoMemory } from "./fleet.ts"
import { ExpenseRepoMemory } from "./expenses.ts"
import { GrantRepoMemory } from "./grants.ts"
import { FiscalRepoMemory } from "./fiscal.ts"
import { InvoiceRepoMemory, PaymentRepoMemory } from "./invoices.ts"
import { LocationRepoMemory } from "./locations.ts"
import { MailboxRepoMemory } from "./mail.ts"
import { ForwardingRepoMemory, SubscriptionRepoMemory, UsageRepoMemory } from "./metering.ts"
import { TenancyRepoMemory } from "./tenancy.ts"
import { RouteRepoMemory } from "./routes.ts"
import { CostingSettingsRepoMemory } from "./costing.ts"
import { DeliveryRepoMemory, OutboxMemory, PortalSessionRepoMemory, WebhookRepoMemory } from "./webhooks.ts"
import { DeviceRepoMemory, PulseRepoMemory } from "./display.ts"
import { ImportRepoMemory } from "./imports.ts"

export { MemoryStore } from "./MemoryStore.ts"
export * from "./contracts.ts"
export * from "./idempotency.ts"
export * from "./obligations.ts"
export * from "./oauth.ts"
export * from "./audit.ts"
export * from "./auth.ts"
export * from "./contacts.ts"
export * from "./court.ts"
export * from "./fleet.ts"
export * from "./expenses.ts"
export * from "./grants.ts"
export * from "./fiscal.ts"
export * from "./invoices.ts"
export * from "./locations.ts"
export * from "./mail.ts"
export * from "./metering.ts"
export * from "./tenancy.ts"
export * from "./routes.ts"
export * from "./costing.ts"
export * from "./webhooks.ts"
export * from "./display.ts"
export * from "./imports.ts"

/** Every storage port in memory, sharing one MemoryStore (the twin of `CoreLayers.SqlStorage`). */
export const MemoryStorage: Layer.Layer<CoreLayers.StoragePorts | MemoryStore, never, Ids.Ids> = OutboxMemory.pipe(
  Layer.provide(WebhookFanOut.WebhookFanOut),
  Layer.provideMerge(Layer.mergeAll(
  TenancyRepoMemory,
  CredentialRepoMemory,
  LocationRepoMemory,
  ExpenseRepoMemory,
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
  PortalSessionRepoMemory,
  ContactRepoMemory,
  InvoiceRepoMemory,
  PaymentRepoMemory,
  AuditRepoMemory,
  FleetRepoMemory,
  CourtRepoMemory,
  GrantRepoMemory,
  FiscalRepoMemory,
  MailboxRepoMemory,
  DeviceRepoMemory,
  PulseRepoMemory,
  SubscriptionRepoMemory,
  UsageRepoMemory,
  ForwardingRepoMemory,
  ForwardingSignal.ForwardingSignal.layer,
  MemoryStore.transactor,
  ImportRepoMemory
).pipe(Layer.provideMerge(DeliverySignal.DeliverySignal.layer), Layer.provideMerge(MemoryStore.layer))))

/** Web Crypto implementations of the crypto services: they run on every runtime. */
export const WebCryptoLive = Layer.mergeAll(
  Digest.layerWebCrypto,
  Kdf.layerWebCrypto,
  SecureRandom.layerWebCrypto,
  Aead.layerWebCrypto,
  Mac.layerWebCrypto,
  Signature.layerWebCrypto
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
