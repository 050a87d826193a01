import { Effect, Schema } from "effect"
import type { Digest, Kdf, Mac, SecureRandom } from "effect/crypto"
import { generateToken, hashToken } from "../shared/secrets.ts"
import { Environment } from "../shared/tenant.ts"
import { OAuthError, type OAuthErrorCode } from "./errors.ts"
import { OAuthAppRepo } from "./OAuthAppRepo.ts"

/** The longest token we ever issue is well under this; longer input is not ours. */
export const MAX_TOKEN_LENGTH = 200

export const fail = (error: OAuthErrorCode, description: string) => Effect.fail(new OAuthError({ error, description }))

export const isEnvironment = Schema.is(Environment)

/** Seconds since the epoch of an ISO instant, as RFC 7662 counts them. */
export const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000)

export type ServerCrypto = Digest.Digest | Kdf.Kdf | Mac.Mac | SecureRandom.SecureRandom

/**
 * What every part of the authorization server shares: the crypto services,
 * bound once when the layer is built so that no method needs them, and the
 * lookup of a client by its client_id.
 */
export const serverTools = Effect.gen(function*() {
  const crypto = yield* Effect.context<ServerCrypto>()
  const apps = yield* OAuthAppRepo
  const withCrypto = <A, E>(effect: Effect.Effect<A, E, ServerCrypto>) => Effect.provideContext(effect, crypto)
  return {
    withCrypto,
    /** The SHA-256 under which a token, handle or secret is stored. */
    hash: (value: string) => withCrypto(hashToken(value)),
    /** A new opaque value without prefix: a code, a request handle, a session token. */
    random: withCrypto(generateToken("")),
    appByClientId: (clientId: string) => clientId.length > 100 ? Effect.succeedNone : apps.findAppByClientId(clientId)
  }
})
