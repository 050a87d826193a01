import { Context, Effect, Layer } from "effect"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  /** The whole exchange (connect, send, answer, body) must finish within this. */
  readonly timeoutMs: number
  /** How much of the answer's body to keep. */
  readonly maxResponseBytes: number
  /** Whether loopback and private destinations may be reached (an operator's choice, for tests and closed networks). */
  readonly allowPrivate: boolean
}

export interface WebhookResponse {
  readonly status: number
  /** The `Retry-After` header as sent, if any. */
  readonly retryAfter: string | undefined
  /** At most `maxResponseBytes` of the body, decoded as UTF-8. */
  readonly body: string
}

/** Why no answer came: the receiver's side (timeout, connection, TLS, DNS) or a refused destination. */
export interface TransportFailure {
  readonly _tag: "TransportFailure"
  readonly message: string
}

/**
 * The network edge of webhook delivery. `send` POSTs once, never follows a
 * redirect, and resolves the host itself: it refuses (unless `allowPrivate`)
 * when any address is not public, and connects only to an address it checked,
 * so a DNS answer that changes between check and connect cannot redirect the
 * request. `resolve` lets a subscription be checked when it is saved.
 */
export class WebhookTransport extends Context.Service<WebhookTransport, {
  readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse, TransportFailure>
  readonly resolve: (hostname: string) => Effect.Effect<ReadonlyArray<string>, TransportFailure>
}>()("@opsplatform/core/webhooks/WebhookTransport") {
  /**
   * A host without a network (embedding core in a script, tests of the API
   * alone): names resolve to nothing, and sending always fails.
   */
  static readonly layerOffline: Layer.Layer<WebhookTransport> = Layer.succeed(
    WebhookTransport,
    WebhookTransport.of({
      send: () => Effect.fail({ _tag: "TransportFailure", message: "This host has no webhook transport" }),
      resolve: () => Effect.succeed([])
    })
  )
}
