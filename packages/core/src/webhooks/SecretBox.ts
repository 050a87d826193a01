import { Context, Effect, Layer } from "effect"
import { Aead, SecureRandom } from "effect/crypto"
import { decodeBase64, encodeBase64 } from "../shared/secrets.ts"

/**
 * Seals secrets that must stay usable (webhook signing secrets) with
 * AES-256-GCM under the operator key. A sealed value is
 * `v1.<base64 nonce>.<base64 ciphertext and tag>`; the caller's `context`
 * (e.g. the secret's id) is bound as associated data, so a sealed value copied
 * onto another row does not open.
 */
export class SecretBox extends Context.Service<SecretBox, {
  readonly seal: (plaintext: string, context: string) => Effect.Effect<string>
  readonly open: (sealed: string, context: string) => Effect.Effect<string>
}>()("@opsplatform/core/webhooks/SecretBox") {
  /** `key` is the operator key: exactly 32 bytes. */
  static readonly layer = (key: Uint8Array): Layer.Layer<SecretBox, never, Aead.Aead | SecureRandom.SecureRandom> =>
    Layer.effect(
      SecretBox,
      Effect.gen(function*() {
        const aead = yield* Aead.Aead
        const random = yield* SecureRandom.SecureRandom
        if (key.length !== 32) return yield* Effect.die(new Error("The operator key must be 32 bytes"))
        const aesKey = yield* Effect.orDie(Aead.key(Aead.aes256Gcm, key))
        const encoder = new TextEncoder()
        const decoder = new TextDecoder()
        return SecretBox.of({
          seal: (plaintext, context) =>
            Effect.gen(function*() {
              const nonce = yield* random.randomBytes(12)
              const sealed = yield* Effect.orDie(
                aead.encrypt(aesKey, encoder.encode(plaintext), { nonce, aad: encoder.encode(context) })
              )
              return `v1.${encodeBase64(nonce)}.${encodeBase64(sealed)}`
            }),
          open: (sealed, context) =>
            Effect.gen(function*() {
              const [version, nonce, body] = sealed.split(".")
              if (version !== "v1" || nonce === undefined || body === undefined) {
                return yield* Effect.die(new Error("A sealed secret has an unknown format"))
              }
              const plain = yield* aead.decrypt(aesKey, decodeBase64(body), {
                nonce: decodeBase64(nonce),
                aad: encoder.encode(context)
              }).pipe(
                Effect.orElseSucceed(() => undefined)
              )
              if (plain === undefined) {
                return yield* Effect.die(
                  new Error("A sealed secret does not open with the operator key (was OPSPLATFORM_SECRET_KEY changed?)")
                )
              }
              return decoder.decode(plain)
            })
        })
      })
    )

  /** For hosts without an operator key: any use fails with `reason`, so nothing is stored unprotected. */
  static readonly layerUnavailable = (reason: string): Layer.Layer<SecretBox> =>
    Layer.succeed(
      SecretBox,
      SecretBox.of({
        seal: () => Effect.die(new Error(reason)),
        open: () => Effect.die(new Error(reason))
      })
    )
}
