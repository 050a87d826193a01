import { Clock, Context, Effect, Layer, Option, Struct } from "effect"
import type { Digest, SecureRandom } from "effect/crypto"
import { NotFound, Unauthorized, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { isUuid } from "../shared/schemas.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis, nowIso } from "../shared/time.ts"
import { UserId } from "../tenancy/model.ts"
import { Tenancy } from "../tenancy/Tenancy.ts"
import { CredentialRepo } from "./CredentialRepo.ts"
import {
  type Credential,
  type CredentialFilter,
  CredentialId,
  type CredentialKind,
  DeviceId,
  kindOfToken,
  type Principal,
  type StoredCredential,
  tokenPrefixes
} from "./model.ts"
import { displayScopes, isScope, type Scope } from "./scopes.ts"
import { constantTimeEqualStrings, generateToken, hashToken } from "../shared/secrets.ts"

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

const publicView = (c: StoredCredential): Credential => Struct.omit(c, ["organization_id", "token_hash", "grant_id"])

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
  /** Revokes every live token of a wall display (its rotation and deletion); returns them as revoked. */
  readonly revokeDevice: (tenant: Tenant, deviceId: string) => Effect.Effect<ReadonlyArray<Credential>>
}>()("@opsplatform/core/auth/Credentials") {
  static readonly layer: Layer.Layer<
    Credentials,
    never,
    CredentialRepo | Tenancy | Ids | Digest.Digest | SecureRandom.SecureRandom
  > = Layer.effect(
    Credentials,
    Effect.gen(function*() {
      const repo = yield* CredentialRepo
      const tenancy = yield* Tenancy
      const ids = yield* Ids
      const crypto = yield* Effect.context<Digest.Digest | SecureRandom.SecureRandom>()
      const withCrypto = <A, E>(eff: Effect.Effect<A, E, Digest.Digest | SecureRandom.SecureRandom>) =>
        Effect.provideContext(eff, crypto)
      const lastTouched = new Map<string, number>()

      const store = Effect.fnUntraced(function*(
        base: Omit<StoredCredential, "id" | "token_hash" | "token_prefix" | "created_at" | "last_used_at" | "revoked_at">
      ) {
        const token = yield* withCrypto(generateToken(tokenPrefixes[base.kind]))
        const stored: StoredCredential = {
          ...base,
          id: yield* newId(ids, CredentialId),
          token_hash: yield* withCrypto(hashToken(token)),
          token_prefix: token.slice(0, tokenPrefixes[base.kind].length + 4),
          created_at: yield* nowIso,
          last_used_at: null,
          revoked_at: null
        }
        yield* repo.insert({ organizationId: stored.organization_id, environment: stored.environment }, stored)
        return { credential: publicView(stored), token }
      })

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
          const member = input.kind === "personal" ? yield* tenancy.getMember(tenant.organizationId, input.userId!) : null
          if (input.kind === "device" && !(isUuid(input.deviceId) && (yield* repo.deviceExists(tenant, input.deviceId)))) {
            return yield* new NotFound({ resource: "device", id: input.deviceId! })
          }
          return yield* store({
            organization_id: tenant.organizationId,
            environment: tenant.environment,
            kind: input.kind,
            name: input.name ?? null,
            scopes: [...new Set(input.scopes)],
            user_id: member?.user_id ?? null,
            device_id: input.kind === "device" ? DeviceId.make(input.deviceId!) : null,
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
            // The grant's user, from a uuid column of the OAuth area's grants.
            user_id: input.userId === null ? null : UserId.make(input.userId),
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
            yield* repo.touch({ organizationId: c.organization_id, environment: c.environment }, c.id, isoFromMillis(now))
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
        revokeDevice: Effect.fn("Credentials.revokeDevice")(function*(tenant, deviceId) {
          const revoked = yield* repo.revokeDevice(tenant, deviceId, yield* nowIso)
          return revoked.map(publicView)
        })
      })
    })
  )
}
