import { Clock, Context, Effect, Layer } from "effect"
import { Digest } from "effect/crypto"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { IdempotencyRepo, SecretBox } from "@opsplatform/core"
import { apiError, BadRequestError, ConflictError } from "./errors.ts"
import { type Annotatable, CurrentPrincipal } from "./security.ts"

/** How long a key is remembered (as Stripe: 24 hours). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000

/**
 * `Idempotency-Key` on mutating POSTs: the first request with a key runs and
 * its successful response is stored; a retry with the same key and the same
 * request gets that response again (with `Idempotent-Replayed: true`) without
 * running twice. A failed request is not remembered, so it can be retried with
 * the same key. Keys belong to one credential and last 24 hours.
 */

/**
 * Marks an endpoint whose successful response shows a secret once (an OAuth
 * client secret, a webhook signing secret): its remembered response is sealed
 * under the operator key, so a retry gets the same secret back and the store
 * never holds it in clear.
 */
export class ResponseCarriesSecret extends Context.Service<ResponseCarriesSecret, true>()(
  "@opsplatform/http-node/ResponseCarriesSecret"
) {}

export const carriesSecret = <E extends Annotatable>(endpoint: E): E =>
  endpoint.annotate(ResponseCarriesSecret, true) as E

/**
 * Marks an endpoint that ignores `Idempotency-Key`: its body is a low-entropy
 * secret (a display PIN), which a request fingerprint — a fast hash of the
 * body — must never hold, and every attempt must be checked and audited, not
 * replayed.
 */
export class IgnoresIdempotencyKey extends Context.Service<IgnoresIdempotencyKey, true>()(
  "@opsplatform/http-node/IgnoresIdempotencyKey"
) {}

export const ignoresIdempotencyKey = <E extends Annotatable>(endpoint: E): E =>
  endpoint.annotate(IgnoresIdempotencyKey, true) as E

export class Idempotency extends HttpApiMiddleware.Service<Idempotency, {
  requires: CurrentPrincipal
}>()("@opsplatform/http-node/Idempotency", {
  error: [BadRequestError, ConflictError]
}) {}

const fail = (status: 400 | 409, code: string, message: string, details?: ReadonlyArray<{ field: string; issue: string }>) =>
  Effect.flatMap(apiError(status, code, message, details ? { details } : undefined), Effect.fail)

export const IdempotencyLive: Layer.Layer<
  Idempotency,
  never,
  IdempotencyRepo.IdempotencyRepo | Digest.Digest | SecretBox.SecretBox
> = Layer.effect(
  Idempotency,
  Effect.gen(function*() {
    const repo = yield* IdempotencyRepo.IdempotencyRepo
    const digest = yield* Digest.Digest
    const box = yield* SecretBox.SecretBox
    return Idempotency.of((httpEffect, { endpoint }) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const key = request.headers["idempotency-key"]
        if (
          request.method !== "POST" || key === undefined ||
          Context.getOrUndefined(endpoint.annotations, IgnoresIdempotencyKey) === true
        ) return yield* httpEffect
        if (key.length === 0 || key.length > 255) {
          return yield* fail(400, "validation_failed", "Idempotency-Key must be 1 to 255 characters", [
            { field: "Idempotency-Key", issue: "must be 1 to 255 characters" }
          ])
        }
        const principal = yield* CurrentPrincipal
        const body = yield* Effect.orDie(request.text)
        const fingerprint = yield* digest.digestHex(
          Digest.sha256,
          new TextEncoder().encode(`${request.method} ${request.url}\n${body}`)
        )
        const now = yield* Clock.currentTimeMillis
        const scope = {
          organizationId: principal.organizationId,
          environment: principal.environment,
          credentialId: principal.credentialId,
          key
        }
        const outcome = yield* repo.begin(
          scope,
          fingerprint,
          new Date(now).toISOString(),
          new Date(now - IDEMPOTENCY_WINDOW_MS).toISOString()
        )
        const sealed = Context.getOrUndefined(endpoint.annotations, ResponseCarriesSecret) === true
        const context = `idempotency:${principal.credentialId}:${key}`
        switch (outcome._tag) {
          case "Replay":
            return HttpServerResponse.text(sealed ? yield* box.open(outcome.body, context) : outcome.body, {
              status: outcome.status,
              contentType: "application/json",
              headers: { "idempotent-replayed": "true" }
            })
          case "InProgress":
            return yield* fail(409, "conflict", "A request with this Idempotency-Key is still being processed")
          case "Mismatch":
            return yield* fail(
              409,
              "conflict",
              "This Idempotency-Key was already used for a different request; use a new key for a new request"
            )
          case "Started":
            break
        }
        const response = yield* httpEffect.pipe(Effect.onExit((exit) => exit._tag === "Failure" ? repo.abandon(scope) : Effect.void))
        if (response.status < 300 && response.body._tag === "Uint8Array") {
          const body = new TextDecoder().decode(response.body.body)
          yield* repo.complete(scope, response.status, sealed ? yield* box.seal(body, context) : body)
        } else {
          yield* repo.abandon(scope)
        }
        return response
      })
    )
  })
)
