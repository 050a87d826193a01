import { Effect, Layer, Option, Struct } from "effect"
import type {
  AuthorizationCode,
  BrowserSession,
  Grant,
  PendingAuthorization,
  RefreshToken,
  StoredApp,
  StoredInstallation
} from "@opsplatform/core/oauth/model"
import { appConflicts, OAuthAppRepo } from "@opsplatform/core/oauth/OAuthAppRepo"
import { OAuthGrantRepo } from "@opsplatform/core/oauth/OAuthGrantRepo"
import { OAuthSessionRepo } from "@opsplatform/core/oauth/OAuthSessionRepo"
import { Conflict } from "@opsplatform/core/shared/errors"
import { pageFromArray } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { inTenant, keyOf } from "./rows.ts"

/** A stored app with its owner; an operator's app has none. */
type OwnedApp = StoredApp & { readonly organization_id: string | null; readonly environment: Tenant["environment"] | null }

const ownedBy = (owner: Tenant) => (app: OwnedApp) =>
  app.organization_id === owner.organizationId && app.environment === owner.environment

const appOf = (row: OwnedApp): StoredApp => Struct.omit(row, ["organization_id", "environment"])

/** A record that names its tenant, stamped with the tenant it is written under (as the SQL tables do). */
const stamped = <A extends { readonly organization_id: string; readonly environment: Tenant["environment"] }>(
  tenant: Tenant,
  row: A
): A => ({ ...row, organization_id: tenant.organizationId, environment: tenant.environment })

const found = <A>(value: A | undefined) => Option.fromNullishOr(value)

const byCreation = (a: { created_at: string; id: string }, b: { created_at: string; id: string }) =>
  a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1

/** In-memory OAuthAppRepo; deleting an app removes what the SQL schema cascades. */
export const OAuthAppRepoMemory: Layer.Layer<OAuthAppRepo, never, MemoryStore> = Layer.effect(
  OAuthAppRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const apps = store.table<OwnedApp>("oauth_apps")
    const installations = store.table<StoredInstallation>("oauth_installations")
    const owned = (owner: Tenant, id: string) => Option.filter(found(apps.get(id)), ownedBy(owner))
    const mine = (tenant: Tenant, id: string) => Option.filter(found(installations.get(id)), inTenant(tenant))
    return OAuthAppRepo.of({
      insertApp: (owner, app) =>
        Effect.suspend(() => {
          if ([...apps.values()].some((a) => a.client_id === app.client_id)) {
            return Effect.fail(new Conflict({ reason: appConflicts.oauth_apps_client_id_key }))
          }
          apps.set(app.id, { ...app, organization_id: owner?.organizationId ?? null, environment: owner?.environment ?? null })
          return Effect.void
        }),
      updateApp: (owner, app) =>
        Effect.sync(() => {
          const current = Option.getOrUndefined(owned(owner, app.id))
          // As the SQL layer: the client id, the type and the creation time never change.
          if (current !== undefined) {
            apps.set(app.id, {
              ...current,
              ...app,
              client_id: current.client_id,
              type: current.type,
              created_at: current.created_at,
              verified_at: current.verified_at
            })
          }
        }),
      findOwnedApp: (owner, id) => Effect.sync(() => Option.map(owned(owner, id), appOf)),
      findAppById: (id) => Effect.sync(() => Option.map(found(apps.get(id)), appOf)),
      findAppByClientId: (clientId) =>
        Effect.sync(() => Option.map(found([...apps.values()].find((a) => a.client_id === clientId)), appOf)),
      findAppsByIds: (ids) => Effect.sync(() => ids.flatMap((id) => Option.toArray(Option.map(found(apps.get(id)), appOf)))),
      listOwnedApps: (owner, page) =>
        Effect.sync(() => pageFromArray(page, [...apps.values()].filter(ownedBy(owner)).map(appOf), keyOf)),
      deleteApp: (owner, id) =>
        Effect.sync(() => {
          if (Option.isNone(owned(owner, id))) return false
          apps.delete(id)
          for (const name of ["oauth_installations", "oauth_grants", "oauth_codes", "oauth_refresh_tokens", "oauth_pending_authorizations"]) {
            const table = store.table<{ app_id: string }>(name)
            for (const [key, row] of table) if (row.app_id === id) table.delete(key)
          }
          return true
        }),
      setAppVerified: (clientId, at) =>
        Effect.sync(() => {
          const row = [...apps.values()].find((a) => a.client_id === clientId)
          if (row === undefined) return Option.none()
          const next = { ...row, verified_at: at }
          apps.set(row.id, next)
          return Option.some(appOf(next))
        }),
      insertInstallation: (tenant, i) =>
        Effect.suspend(() => {
          const taken = [...installations.values()].some((x) => x.app_id === i.app_id && inTenant(tenant)(x))
          if (taken) return Effect.fail(new Conflict({ reason: appConflicts.oauth_installations_app_tenant_key }))
          installations.set(i.id, stamped(tenant, i))
          return Effect.void
        }),
      findInstallation: (tenant, id) => Effect.sync(() => mine(tenant, id)),
      listInstallations: (tenant, page) =>
        Effect.sync(() => pageFromArray(page, [...installations.values()].filter(inTenant(tenant)), keyOf)),
      installationsOfApp: (appId) =>
        Effect.sync(() => [...installations.values()].filter((i) => i.app_id === appId).sort(byCreation)),
      deleteInstallation: (tenant, id) =>
        Effect.sync(() => {
          const row = mine(tenant, id)
          if (Option.isSome(row)) installations.delete(id)
          return row
        })
    })
  })
)

/** In-memory OAuthGrantRepo: the consume operations are atomic because each runs in one synchronous step. */
export const OAuthGrantRepoMemory: Layer.Layer<OAuthGrantRepo, never, MemoryStore> = Layer.effect(
  OAuthGrantRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const grants = store.table<Grant>("oauth_grants")
    const codes = store.table<AuthorizationCode>("oauth_codes")
    const refresh = store.table<RefreshToken>("oauth_refresh_tokens")
    const grantOf = (tenant: Tenant, id: string) => Option.filter(found(grants.get(id)), inTenant(tenant))
    // A refresh token is the tenant's when its grant is, as in the SQL layer.
    const tokenOf = (tenant: Tenant, id: string) =>
      Option.filter(found(refresh.get(id)), (t) => Option.isSome(grantOf(tenant, t.grant_id)))
    return OAuthGrantRepo.of({
      insertGrant: (tenant, g) => Effect.sync(() => void grants.set(g.id, stamped(tenant, g))),
      findGrant: (id) => Effect.sync(() => found(grants.get(id))),
      revokeGrant: (tenant, id, at) =>
        Effect.sync(() => {
          const grant = grantOf(tenant, id)
          if (Option.isNone(grant)) return false
          const live = grant.value.revoked_at === null
          if (live) grants.set(id, { ...grant.value, revoked_at: at })
          for (const t of refresh.values()) {
            if (t.grant_id === id && t.revoked_at === null) refresh.set(t.id, { ...t, revoked_at: at })
          }
          return live
        }),
      liveGrantIds: (tenant, appId) =>
        Effect.sync(() =>
          [...grants.values()].filter((g) => g.app_id === appId && g.revoked_at === null && inTenant(tenant)(g)).map((g) => g.id)
        ),
      liveGrantsOfApp: (appId) =>
        Effect.sync(() => [...grants.values()].filter((g) => g.app_id === appId && g.revoked_at === null)),
      insertCode: (tenant, c) => Effect.sync(() => void codes.set(c.id, stamped(tenant, c))),
      findCodeByHash: (hash) => Effect.sync(() => found([...codes.values()].find((c) => c.code_hash === hash))),
      consumeCode: (tenant, id, at) =>
        Effect.sync(() => {
          const code = Option.getOrUndefined(Option.filter(found(codes.get(id)), inTenant(tenant)))
          if (code === undefined || code.used_at !== null) return Option.none()
          const next = { ...code, used_at: at }
          codes.set(id, next)
          return Option.some(next)
        }),
      insertRefreshToken: (tenant, t) =>
        Option.isNone(grantOf(tenant, t.grant_id))
          ? Effect.die(new Error("A refresh token was issued under a grant of another tenant"))
          : Effect.sync(() => void refresh.set(t.id, t)),
      findRefreshTokenByHash: (hash) =>
        Effect.sync(() => found([...refresh.values()].find((t) => t.token_hash === hash))),
      consumeRefreshToken: (tenant, id, at) =>
        Effect.sync(() => {
          const token = Option.getOrUndefined(tokenOf(tenant, id))
          if (token === undefined || token.used_at !== null || token.revoked_at !== null) return Option.none()
          const next = { ...token, used_at: at }
          refresh.set(id, next)
          return Option.some(next)
        }),
      chainOf: (tenant, grantId) =>
        Effect.sync(() =>
          Option.isNone(grantOf(tenant, grantId))
            ? []
            : [...refresh.values()].filter((t) => t.grant_id === grantId).sort(byCreation)
        )
    })
  })
)

/** In-memory OAuthSessionRepo. */
export const OAuthSessionRepoMemory: Layer.Layer<OAuthSessionRepo, never, MemoryStore> = Layer.effect(
  OAuthSessionRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const sessions = store.table<BrowserSession>("oauth_browser_sessions")
    const pending = store.table<PendingAuthorization>("oauth_pending_authorizations")
    return OAuthSessionRepo.of({
      insertSession: (s) => Effect.sync(() => void sessions.set(s.id, s)),
      findSessionByHash: (hash) => Effect.sync(() => found([...sessions.values()].find((s) => s.token_hash === hash))),
      signInSession: (session) =>
        Effect.sync(() => {
          const current = sessions.get(session.id)
          if (current) sessions.set(session.id, { ...session, created_at: current.created_at })
        }),
      insertPending: (p) => Effect.sync(() => void pending.set(p.id, p)),
      findPendingByHash: (hash) => Effect.sync(() => found([...pending.values()].find((p) => p.handle_hash === hash))),
      takePending: (id) =>
        Effect.sync(() => {
          const p = found(pending.get(id))
          pending.delete(id)
          return p
        }),
      purgeExpired: (before) =>
        Effect.sync(() => {
          let n = 0
          const cutoff = Date.parse(before)
          for (const [id, p] of pending) {
            if (Date.parse(p.expires_at) <= cutoff) {
              pending.delete(id)
              n++
            }
          }
          for (const [id, s] of sessions) {
            if (Date.parse(s.expires_at) <= cutoff) {
              sessions.delete(id)
              // The SQL schema cascades the session's pending requests without counting them.
              for (const [pid, p] of pending) if (p.session_id === id) pending.delete(pid)
              n++
            }
          }
          return n
        })
    })
  })
)
