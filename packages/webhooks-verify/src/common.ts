export { type WebhookErrorCode, webhookErrorCodes, WebhookVerificationError } from "./errors.ts"
export type * from "./events.ts"
export type { HeadersLike, WebhookHeaders } from "./headers.ts"
export type { WebhookPayload } from "./payload.ts"
export type { WebhookSecret } from "./secret.ts"
export {
  defaultToleranceSeconds,
  type RequestLike,
  type SignedHeaders,
  type SignInput,
  type VerifiedSignature,
  type VerifiedWebhook,
  type VerifierOptions,
  type WebhookOptions,
  type WebhookVerifier,
  type WebhookKeyPair,
  type WebhooksApi,
  type WebhookVerifyOptions
} from "./verifier.ts"
