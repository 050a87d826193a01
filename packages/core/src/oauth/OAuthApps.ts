import { Context, Effect, Layer, Option, Struct } from "effect"
import type { Digest, SecureRandom } from "effect/crypto"
import { Credentials } from "../auth/Credentials.ts"
import { encodeHex, generateToken, hashToken, randomBytes } from "../shared/secrets.ts"
import { Conflict, NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { isUuid } from "../shared/schemas.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import { oauthPrefixes } from "./lifetimes.ts"
import {
  type AppCreate,
  type AppUpdate,
  type Installation,
  type InstallationCreate,
  InstallationId,
  type OAuthApp,
  OAuthAppId,
  type OAuthAppWithSecret,
  type StoredApp,
  type StoredInstallation
} from "./model.ts"
import { OAuthAppRepo } from "./OAuthAppRepo.ts"
import { OAuthGrantRepo } from "./OAuthGrantRepo.ts"
import { grantRevoker } from "./revocation.ts"
import { parseScopeParameter, registrationIssues, scopesOutside, tenantOf } from "./rules.ts"

export const publicApp = (a: StoredApp): OAuthApp => Struct.omit(a, ["secret_hash", "verified_at"])

const publicInstallation = (i: StoredInstallation, app: StoredApp): Installation => ({
  ...Struct.omit(i, ["organization_id"]),
  client_id: app.client_id,
  app_name: app.name
})

const unique = <A>(xs: ReadonlyArray<A>): ReadonlyArray<A> => [...new Set(xs)]

/**
 * OAuth apps and their installations. An app belongs to the organization
 * environment that registered it (or to the operator, from the CLI); any
 * organization environment may install it or let its members consent to it.
 */
export class OAuthApps extends Context.Service<OAuthApps, {
  /** `owner` null: an operator's app, managed from the CLI only. */
  readonly register: (owner: Tenant | null, input: AppCreate) => Effect.Effect<OAuthAppWithSecret, ValidationFailed>
  readonly list: (owner: Tenant, page: PageRequest) => Effect.Effect<Page<OAuthApp>>
  readonly get: (owner: Tenant, id: string) => Effect.Effect<OAuthApp, NotFound>
  readonly update: (owner: Tenant, id: string, patch: AppUpdate) => Effect.Effect<OAuthApp, NotFound | ValidationFailed>
  /** A new secret replaces the old one at once; the old one stops authenticating. */
  readonly rotateSecret: (owner: Tenant, id: string) => Effect.Effect<OAuthAppWithSecret, NotFound | Conflict>
  /** Deletes the app and revokes every token it holds anywhere. */
  readonly remove: (owner: Tenant, id: string) => Effect.Effect<void, NotFound>
  readonly install: (
    tenant: Tenant,
    input: InstallationCreate
  ) => Effect.Effect<Installation, NotFound | ValidationFailed | Conflict>
  readonly listInstallations: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<Installation>>
  readonly getInstallation: (tenant: Tenant, id: string) => Effect.Effect<Installation, NotFound>
  /** Removes the installation and revokes every token the app holds in that organization environment. */
  readonly uninstall: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound>
  /**
   * The operator's mark (the CLI only): a verified app's authorize requests
   * that fail before the member acts go back to its redirect URI; others' are
   * shown on the error page. Answers when it was verified (null: not).
   */
  readonly setVerified: (clientId: string, verified: boolean) => Effect.Effect<{ readonly client_id: string; readonly verified_at: string | null }, NotFound>
}>()("@opsplatform/core/oauth/OAuthApps") {
  static readonly layer: Layer.Layer<
    OAuthApps,
    never,
    OAuthAppRepo | OAuthGrantRepo | TenancyRepo | Credentials | Ids | Transactor | Digest.Digest | SecureRandom.SecureRandom
  > = Layer.effect(
    OAuthApps,
    Effect.gen(function*() {
      const repo = yield* OAuthAppRepo
      const grants = yield* OAuthGrantRepo
      const tenancy = yield* TenancyRepo
      const ids = yield* Ids
      const tx = yield* Transactor
      const revoke = grantRevoker(grants, yield* Credentials, tx)
      const crypto = yield* Effect.context<Digest.Digest | SecureRandom.SecureRandom>()
      const withCrypto = <A, E>(eff: Effect.Effect<A, E, Digest.Digest | SecureRandom.SecureRandom>) =>
        Effect.provideContext(eff, crypto)

      const newSecret = withCrypto(Effect.gen(function*() {
        const secret = yield* generateToken(oauthPrefixes.clientSecret)
        return { secret, hash: yield* hashToken(secret), prefix: secret.slice(0, oauthPrefixes.clientSecret.length + 4) }
      }))

      const owned = (owner: Tenant, id: string) =>
        (isUuid(id) ? repo.findOwnedApp(owner, id) : Effect.succeedNone).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ resource: "app", id })),
            onSome: Effect.succeed
          }))
        )

      const validate = (app: AppCreate) => {
        const details = [...registrationIssues(app)]
        if (app.name.trim().length === 0 || app.name.length > 200) {
          details.unshift({ field: "name", issue: "must be 1 to 200 characters, not blank" })
        }
        return details.length > 0 ? Effect.fail(new ValidationFailed({ details })) : Effect.void
      }

      const enrich = Effect.fnUntraced(function*(items: ReadonlyArray<StoredInstallation>) {
        const apps = new Map((yield* repo.findAppsByIds(unique(items.map((i) => i.app_id)))).map((a) => [a.id, a]))
        return items.map((i) => publicInstallation(i, apps.get(i.app_id)!))
      })

      return OAuthApps.of({
        register: Effect.fn("OAuthApps.register")(function*(owner, input) {
          const shape = {
            name: input.name.trim(),
            type: input.type,
            redirect_uris: unique(input.redirect_uris),
            scopes: unique(input.scopes),
            grant_types: unique(input.grant_types)
          }
          yield* validate({ ...shape, redirect_uris: input.redirect_uris })
          const now = yield* nowIso
          const secret = input.type === "confidential" ? yield* newSecret : undefined
          const app: StoredApp = {
            ...shape,
            id: yield* newId(ids, OAuthAppId),
            client_id: `app_${encodeHex(yield* withCrypto(randomBytes(16)))}`,
            secret_hash: secret?.hash ?? null,
            secret_prefix: secret?.prefix ?? null,
            secret_rotated_at: null,
            verified_at: null,
            created_at: now,
            updated_at: now
          }
          // A client id is 128 random bits: a collision is a defect, not the caller's conflict.
          yield* Effect.orDie(repo.insertApp(owner, app))
          return { ...publicApp(app), client_secret: secret?.secret ?? null }
        }),
        list: (owner, page) => repo.listOwnedApps(owner, page).pipe(Effect.map((p) => ({ ...p, items: p.items.map(publicApp) }))),
        get: (owner, id) => Effect.map(owned(owner, id), publicApp),
        update: Effect.fn("OAuthApps.update")(function*(owner, id, patch) {
          const current = yield* owned(owner, id)
          const next: StoredApp = {
            ...current,
            ...(patch.name !== undefined ? { name: patch.name.trim() } : {}),
            ...(patch.redirect_uris !== undefined ? { redirect_uris: unique(patch.redirect_uris) } : {}),
            ...(patch.scopes !== undefined ? { scopes: unique(patch.scopes) } : {}),
            ...(patch.grant_types !== undefined ? { grant_types: unique(patch.grant_types) } : {}),
            updated_at: yield* nowIso
          }
          yield* validate({ ...next, redirect_uris: patch.redirect_uris ?? next.redirect_uris })
          yield* repo.updateApp(owner, next)
          return publicApp(next)
        }),
        rotateSecret: Effect.fn("OAuthApps.rotateSecret")(function*(owner, id) {
          const current = yield* owned(owner, id)
          if (current.type !== "confidential") {
            return yield* new Conflict({ reason: "A public app has no client secret to rotate" })
          }
          const secret = yield* newSecret
          const now = yield* nowIso
          const next: StoredApp = {
            ...current,
            secret_hash: secret.hash,
            secret_prefix: secret.prefix,
            secret_rotated_at: now,
            updated_at: now
          }
          yield* repo.updateApp(owner, next)
          return { ...publicApp(next), client_secret: secret.secret }
        }),
        remove: Effect.fn("OAuthApps.remove")(function*(owner, id) {
          const app = yield* owned(owner, id)
          yield* tx.withTransaction(Effect.gen(function*() {
            for (const grant of yield* grants.liveGrantsOfApp(app.id)) yield* revoke(tenantOf(grant), [grant.id])
            yield* repo.deleteApp(owner, app.id)
          }))
        }),
        install: Effect.fn("OAuthApps.install")(function*(tenant, input) {
          const app = yield* repo.findAppByClientId(input.client_id).pipe(
            Effect.flatMap(Option.match({
              onNone: () => Effect.fail(new NotFound({ resource: "app", id: input.client_id })),
              onSome: Effect.succeed
            }))
          )
          const parsed = parseScopeParameter(input.scopes.join(" "))
          const details: Array<{ field: string; issue: string }> = []
          if (input.scopes.length === 0) details.push({ field: "scopes", issue: "must name at least one scope" })
          if (parsed.unknown.length > 0) details.push({ field: "scopes", issue: `unknown scopes: ${parsed.unknown.join(", ")}` })
          const outside = scopesOutside(parsed.scopes, app.scopes)
          if (outside.length > 0) {
            details.push({ field: "scopes", issue: `the app may not ask for ${outside.join(", ")}` })
          }
          if (details.length > 0) return yield* new ValidationFailed({ details })
          if (Option.isNone(yield* tenancy.findOrganization(tenant.organizationId))) {
            return yield* new NotFound({ resource: "organization", id: tenant.organizationId })
          }
          const installation: StoredInstallation = {
            id: yield* newId(ids, InstallationId),
            app_id: app.id,
            organization_id: tenant.organizationId,
            environment: tenant.environment,
            scopes: parsed.scopes,
            created_at: yield* nowIso
          }
          yield* tx.withTransaction(Effect.gen(function*() {
            yield* repo.insertInstallation(tenant, installation)
            // The installation's client_credentials tokens hang off a grant with the installation's id.
            yield* grants.insertGrant(tenant, {
              id: installation.id,
              app_id: app.id,
              kind: "client_credentials",
              organization_id: tenant.organizationId,
              environment: tenant.environment,
              user_id: null,
              installation_id: installation.id,
              scopes: installation.scopes,
              created_at: installation.created_at,
              refresh_until: null,
              revoked_at: null
            })
          }))
          return publicInstallation(installation, app)
        }),
        listInstallations: (tenant, page) =>
          Effect.gen(function*() {
            const p = yield* repo.listInstallations(tenant, page)
            return { ...p, items: yield* enrich(p.items) }
          }),
        getInstallation: Effect.fn("OAuthApps.getInstallation")(function*(tenant, id) {
          const found = isUuid(id) ? yield* repo.findInstallation(tenant, id) : Option.none()
          if (Option.isNone(found)) return yield* new NotFound({ resource: "installation", id })
          return (yield* enrich([found.value]))[0]!
        }),
        uninstall: Effect.fn("OAuthApps.uninstall")(function*(tenant, id) {
          yield* tx.withTransaction(Effect.gen(function*() {
            const removed = isUuid(id) ? yield* repo.deleteInstallation(tenant, id) : Option.none()
            if (Option.isNone(removed)) return yield* new NotFound({ resource: "installation", id })
            yield* revoke(tenant, yield* grants.liveGrantIds(tenant, removed.value.app_id))
          }))
        }),
        setVerified: Effect.fn("OAuthApps.setVerified")(function*(clientId, verified) {
          const updated = yield* repo.setAppVerified(clientId, verified ? yield* nowIso : null)
          if (Option.isNone(updated)) return yield* new NotFound({ resource: "app", id: clientId })
          return { client_id: updated.value.client_id, verified_at: updated.value.verified_at }
        })
      })
    })
  )
}
