import { Clock, Context, Effect, Layer, Option } from "effect"
import type { Digest, Kdf, SecureRandom } from "effect/crypto"
import { NotFound, Unauthorized, ValidationFailed } from "../shared/errors.ts"
import { Ids } from "../shared/Ids.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Tenancy } from "../tenancy/Tenancy.ts"
import { type CredentialFilter, CredentialRepo } from "./CredentialRepo.ts"
import { type Credential, type CredentialKind, type Device, kindOfToken, type Principal, type StoredCredential, tokenPrefixes } from "./model.ts"
import { displayScopes, isScope, type Scope } from "./scopes.ts"
import { constantTimeEqualStrings, generateToken, hashLowEntropy, hashToken } from "./secrets.ts"

export interface IssueInput {
  readonly kind: Exclude<CredentialKind, "oauth">
  readonly scopes: ReadonlyArray<string>
  readonly name?: string | undefined
  /** Required for personal tokens: a member of the organization. */
  readonly userId?: string | undefined
  /** Required for device tokens: a device of the same organization environment. */
  readonly deviceId?: string | undefined
}

export interface OAuthAccessInput {
  readonly organizationId: string
  readonly environment: Tenant["environment"]
  readonly scopes: ReadonlyArray<string>
  readonly appId: string
  readonly userId: string | null
  readonly grantId: string
  readonly expiresAt: string
}

export interface Issued {
  readonly credential: Credential
  /** The token itself: shown once, never stored. */
  readonly token: string
}

/** How often `last_used_at` is written for one credential, at most. */
export const LAST_USED_PRECISION_MS = 60_000

const publicView = (c: StoredCredential): Credential => ({
  id: c.id,
  kind: c.kind,
  environment: c.environment,
  name: c.name,
  token_prefix: c.token_prefix,
  scopes: c.scopes,
  user_id: c.user_id,
  device_id: c.device_id,
  app_id: c.app_id,
  created_at: c.created_at,
  last_used_at: c.last_used_at,
  expires_at: c.expires_at,
  revoked_at: c.revoked_at
})

/** API keys, personal tokens, device tokens and OAuth access tokens: issue, list, revoke, authenticate. */
export class Credentials extends Context.Service<Credentials, {
  readonly issue: (tenant: Tenant, input: IssueInput) => Effect.Effect<Issued, ValidationFailed | NotFound>
  /** Issues an OAuth access token (`svc_at_`) bound to a grant, which can revoke it with the rest of its chain. */
  readonly issueOAuthAccess: (input: OAuthAccessInput) => Effect.Effect<Issued>
  readonly list: (tenant: Tenant, filter: CredentialFilter, page: PageRequest) => Effect.Effect<Page<Credential>>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Credential, NotFound>
  readonly revoke: (tenant: Tenant, id: string) => Effect.Effect<Credential, NotFound>
  readonly revokeGrant: (grantId: string) => Effect.Effect<number>
  /** Operator access (CLI): revokes a credential by id in whichever tenant it lives. */
  readonly revokeAnyTenant: (id: string) => Effect.Effect<Credential & { readonly organization_id: string }, NotFound>
  /** Resolves a bearer token; unknown, malformed, revoked and expired all fail alike. */
  readonly authenticate: (token: string) => Effect.Effect<Principal, Unauthorized>
  /** Reads a stored credential by its token without touching it (introspection). */
  readonly lookup: (token: string) => Effect.Effect<Option.Option<StoredCredential>>
  readonly createDevice: (tenant: Tenant, name: string) => Effect.Effect<Device, ValidationFailed>
  readonly getDevice: (tenant: Tenant, id: string) => Effect.Effect<Device, NotFound>
  readonly setDevicePin: (tenant: Tenant, deviceId: string, pin: string | null) => Effect.Effect<Device, NotFound | ValidationFailed>
}>()("@opsplatform/core/auth/Credentials") {
  static readonly layer: Layer.Layer<
    Credentials,
    never,
    CredentialRepo | Tenancy | Ids | Digest.Digest | Kdf.Kdf | SecureRandom.SecureRandom
  > = Layer.effect(
    Credentials,
    Effect.gen(function*() {
      const repo = yield* CredentialRepo
      const tenancy = yield* Tenancy
      const ids = yield* Ids
      const crypto = yield* Effect.context<Digest.Digest | Kdf.Kdf | SecureRandom.SecureRandom>()
      const withCrypto = <A, E>(eff: Effect.Effect<A, E, Digest.Digest | Kdf.Kdf | SecureRandom.SecureRandom>) =>
        Effect.provideContext(eff, crypto)
      const lastTouched = new Map<string, number>()

      const store = Effect.fnUntraced(function*(
        base: Omit<StoredCredential, "id" | "token_hash" | "token_prefix" | "created_at" | "last_used_at" | "revoked_at">
      ) {
        const token = yield* withCrypto(generateToken(tokenPrefixes[base.kind]))
        const stored: StoredCredential = {
          ...base,
          id: yield* ids.uuid,
          token_hash: yield* withCrypto(hashToken(token)),
          token_prefix: token.slice(0, tokenPrefixes[base.kind].length + 4),
          created_at: yield* nowIso,
          last_used_at: null,
          revoked_at: null
        }
        yield* repo.insert(stored)
        return { credential: publicView(stored), token }
      })

      const getDevice = (tenant: Tenant, id: string) =>
        repo.findDevice(tenant, id).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ resource: "device", id })),
            onSome: Effect.succeed
          }))
        )

      const lookup = (token: string) =>
        kindOfToken(token) === undefined || token.length > 200
          ? Effect.succeedNone
          : withCrypto(hashToken(token)).pipe(
            Effect.flatMap((hash) =>
              repo.findByHash(hash).pipe(
                // The index found the row by hash; compare again in constant time so the
                // decision never depends on how much of a guess matched.
                Effect.map(Option.filter((c) => constantTimeEqualStrings(c.token_hash, hash)))
              )
            )
          )

      return Credentials.of({
        issue: Effect.fn("Credentials.issue")(function*(tenant, input) {
          const details: Array<{ field: string; issue: string }> = []
          const unknown = input.scopes.filter((s) => !isScope(s))
          if (input.scopes.length === 0) details.push({ field: "scopes", issue: "must name at least one scope" })
          if (unknown.length > 0) details.push({ field: "scopes", issue: `unknown scopes: ${unknown.join(", ")}` })
          if (input.kind === "device") {
            const outside = input.scopes.filter((s) => !displayScopes.includes(s as Scope))
            if (outside.length > 0) {
              details.push({
                field: "scopes",
                issue: `a device token may only carry ${displayScopes.join(", ")}; not ${outside.join(", ")}`
              })
            }
            if (input.deviceId === undefined) details.push({ field: "device_id", issue: "is required for a device token" })
          }
          if (input.kind === "personal" && input.userId === undefined) {
            details.push({ field: "user_id", issue: "is required for a personal token" })
          }
          if (details.length > 0) return yield* new ValidationFailed({ details })
          if (input.kind === "personal") yield* tenancy.getMember(tenant.organizationId, input.userId!)
          if (input.kind === "device") yield* getDevice(tenant, input.deviceId!)
          return yield* store({
            organization_id: tenant.organizationId,
            environment: tenant.environment,
            kind: input.kind,
            name: input.name ?? null,
            scopes: [...new Set(input.scopes)],
            user_id: input.kind === "personal" ? input.userId! : null,
            device_id: input.kind === "device" ? input.deviceId! : null,
            app_id: null,
            grant_id: null,
            expires_at: null
          })
        }),
        issueOAuthAccess: (input) =>
          store({
            organization_id: input.organizationId,
            environment: input.environment,
            kind: "oauth",
            name: null,
            scopes: [...new Set(input.scopes)],
            user_id: input.userId,
            device_id: null,
            app_id: input.appId,
            grant_id: input.grantId,
            expires_at: input.expiresAt
          }),
        list: (tenant, filter, page) =>
          repo.list(tenant, filter, page).pipe(Effect.map((p) => ({ ...p, items: p.items.map(publicView) }))),
        get: (tenant, id) =>
          repo.find(tenant, id).pipe(
            Effect.flatMap(Option.match({
              onNone: () => Effect.fail(new NotFound({ resource: "credential", id })),
              onSome: (c) => Effect.succeed(publicView(c))
            }))
          ),
        revoke: Effect.fn("Credentials.revoke")(function*(tenant, id) {
          const revoked = yield* repo.revoke(tenant, id, yield* nowIso)
          if (Option.isNone(revoked)) return yield* new NotFound({ resource: "credential", id })
          return publicView(revoked.value)
        }),
        revokeAnyTenant: Effect.fn("Credentials.revokeAnyTenant")(function*(id) {
          const found = yield* repo.findById(id)
          if (Option.isNone(found)) return yield* new NotFound({ resource: "credential", id })
          const tenant = { organizationId: found.value.organization_id, environment: found.value.environment }
          const revoked = yield* repo.revoke(tenant, id, yield* nowIso)
          if (Option.isNone(revoked)) return yield* new NotFound({ resource: "credential", id })
          return { ...publicView(revoked.value), organization_id: revoked.value.organization_id }
        }),
        revokeGrant: Effect.fn("Credentials.revokeGrant")(function*(grantId) {
          return yield* repo.revokeGrant(grantId, yield* nowIso)
        }),
        authenticate: Effect.fn("Credentials.authenticate")(function*(token) {
          const found = yield* lookup(token)
          const now = yield* Clock.currentTimeMillis
          if (
            Option.isNone(found) || found.value.revoked_at !== null ||
            (found.value.expires_at !== null && Date.parse(found.value.expires_at) <= now)
          ) {
            return yield* new Unauthorized({ reason: "The bearer token is unknown, revoked or expired" })
          }
          const c = found.value
          const previous = lastTouched.get(c.id) ?? (c.last_used_at === null ? 0 : Date.parse(c.last_used_at))
          if (now - previous >= LAST_USED_PRECISION_MS) {
            lastTouched.set(c.id, now)
            yield* repo.touch(c.id, new Date(now).toISOString())
          }
          return {
            kind: c.kind,
            credentialId: c.id,
            organizationId: c.organization_id,
            environment: c.environment,
            scopes: new Set(c.scopes),
            userId: c.user_id,
            deviceId: c.device_id,
            appId: c.app_id
          } satisfies Principal
        }),
        lookup,
        createDevice: Effect.fn("Credentials.createDevice")(function*(tenant, name) {
          const trimmed = name.trim()
          if (trimmed.length === 0 || trimmed.length > 200) {
            return yield* ValidationFailed.field("name", "must be 1 to 200 characters")
          }
          const device: Device = {
            id: yield* ids.uuid,
            environment: tenant.environment,
            name: trimmed,
            has_pin: false,
            created_at: yield* nowIso
          }
          yield* repo.insertDevice(tenant.organizationId, device)
          return device
        }),
        getDevice,
        setDevicePin: Effect.fn("Credentials.setDevicePin")(function*(tenant, deviceId, pin) {
          if (pin !== null && !/^\d{4,8}$/.test(pin)) return yield* ValidationFailed.field("pin", "must be 4 to 8 digits")
          const hash = pin === null ? null : yield* withCrypto(hashLowEntropy(pin))
          const updated = yield* repo.setDevicePin(tenant, deviceId, hash)
          if (!updated) return yield* new NotFound({ resource: "device", id: deviceId })
          return yield* getDevice(tenant, deviceId)
        })
      })
    })
  )
}
