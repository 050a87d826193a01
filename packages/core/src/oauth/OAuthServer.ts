import { Context, Effect, Layer, Option } from "effect"
import type { Credentials } from "../auth/Credentials.ts"
import type { RateLimiter } from "../ratelimit/RateLimiter.ts"
import type { Ids } from "../shared/Ids.ts"
import type { PasswordHashing } from "../shared/PasswordHashing.ts"
import { constantTimeEqualStrings } from "../shared/secrets.ts"
import type { Transactor } from "../shared/Transactor.ts"
import type { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import { type AuthorizationEndpoint, makeAuthorizationEndpoint } from "./authorize.ts"
import type { OAuthError } from "./errors.ts"
import type { StoredApp } from "./model.ts"
import type { OAuthAppRepo } from "./OAuthAppRepo.ts"
import type { OAuthGrantRepo } from "./OAuthGrantRepo.ts"
import type { OAuthSessionRepo } from "./OAuthSessionRepo.ts"
import { makeRevocationEndpoints, type RevocationEndpoints } from "./revocation.ts"
import { fail, MAX_TOKEN_LENGTH, type ServerCrypto, serverTools } from "./serverTools.ts"
import { makeTokenEndpoint, type TokenEndpoint } from "./token.ts"

export type { AuthorizationRedirect, AuthorizeParameters, InteractionView } from "./authorize.ts"
export type { Introspection } from "./revocation.ts"
export type { TokenResponse } from "./token.ts"

/** Client authentication (RFC 6749 §2.3), in front of the token, revocation and introspection endpoints. */
export interface ClientAuthentication {
  /** `secret` undefined: a public client identifying itself by client_id only. */
  readonly authenticateClient: (clientId: string, secret: string | undefined) => Effect.Effect<StoredApp, OAuthError>
}

/**
 * The OAuth 2.0 authorization server: client authentication, the authorize
 * request and its consent interaction (`authorize.ts`), the token endpoint's
 * three grants (`token.ts`), revocation (RFC 7009) and introspection
 * (RFC 7662, `revocation.ts`). Transport-free: the HTTP adapter parses
 * requests into these calls and renders their results.
 */
export class OAuthServer extends Context.Service<
  OAuthServer,
  ClientAuthentication & AuthorizationEndpoint & TokenEndpoint & RevocationEndpoints
>()("@opsplatform/core/oauth/OAuthServer") {
  static readonly layer: Layer.Layer<
    OAuthServer,
    never,
    | OAuthAppRepo
    | OAuthGrantRepo
    | OAuthSessionRepo
    | TenancyRepo
    | Credentials
    | RateLimiter
    | Ids
    | Transactor
    | PasswordHashing
    | ServerCrypto
  > = Layer.effect(
    OAuthServer,
    Effect.gen(function*() {
      const { appByClientId, hash } = yield* serverTools

      const authenticateClient: ClientAuthentication["authenticateClient"] = Effect.fn("OAuthServer.authenticateClient")(
        function*(clientId, secret) {
          const found = yield* appByClientId(clientId)
          if (Option.isNone(found)) return yield* fail("invalid_client", "Unknown client")
          const app = found.value
          if (app.type === "public") {
            if (secret !== undefined) return yield* fail("invalid_client", "A public client has no secret to send")
            return app
          }
          if (secret === undefined) return yield* fail("invalid_client", "This client must authenticate with its client secret")
          const presented = secret.length > MAX_TOKEN_LENGTH ? undefined : yield* hash(secret)
          if (presented === undefined || app.secret_hash === null || !constantTimeEqualStrings(app.secret_hash, presented)) {
            return yield* fail("invalid_client", "Client authentication failed")
          }
          return app
        }
      )

      return OAuthServer.of({
        authenticateClient,
        ...(yield* makeAuthorizationEndpoint),
        ...(yield* makeTokenEndpoint),
        ...(yield* makeRevocationEndpoints)
      })
    })
  )
}
