import { Effect, Layer, Option } from "effect"
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
import { type CursorKey, pageFromArray } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"

const inTenant = (tenant: Tenant) => (row: { organization_id: string | null; environment: string | null }) =>
  row.organization_id === tenant.organizationId && row.environment === tenant.environment

const keyOf = (row: { created_at: string; id: string }): CursorKey => ({ createdAt: row.created_at, id: row.id })

const found = <A>(value: A | undefined) => Option.fromNullishOr(value)

/** In-memory OAuthAppRepo; deleting an app removes what the SQL schema cascades. */
export const OAuthAppRepoMemory: Layer.Layer<OAuthAppRepo, never, MemoryStore> = Layer.effect(
  OAuthAppRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const appsTable = store.table<StoredApp>("oauth_apps")
    const installations = store.table<StoredInstallation>("oauth_installations")
    return OAuthAppRepo.of({
      insertApp: (app) =>
        Effect.suspend(() => {
          if ([...appsTable.values()].some((a) => a.client_id === app.client_id)) {
            return Effect.fail(new Conflict({ reason: appConflicts.oauth_apps_client_id_key }))
          }
          appsTable.set(app.id, app)
          return Effect.void
        }),
      updateApp: (app) =>
        Effect.sync(() => {
          if (appsTable.has(app.id)) appsTable.set(app.id, app)
        }),
      findOwnedApp: (owner, id) => Effect.sync(() => Option.filter(found(appsTable.get(id)), inTenant(owner))),
      findAppById: (id) => Effect.sync(() => found(appsTable.get(id))),
      findAppByClientId: (clientId) => Effect.sync(() => found([...appsTable.values()].find((a) => a.client_id === clientId))),
      findAppsByIds: (ids) => Effect.sync(() => ids.flatMap((id) => Option.toArray(found(appsTable.get(id))))),
      listOwnedApps: (owner, page) =>
        Effect.sync(() => pageFromArray(page, [...appsTable.values()].filter(inTenant(owner)), keyOf)),
      deleteApp: (id) =>
        Effect.sync(() => {
          if (!appsTable.delete(id)) return false
          for (const name of ["oauth_installations", "oauth_grants", "oauth_codes", "oauth_refresh_tokens", "oauth_pending_authorizations"]) {
            const table = store.table<{ app_id: string }>(name)
            for (const [key, row] of table) if (row.app_id === id) table.delete(key)
          }
          return true
        }),
      insertInstallation: (i) =>
        Effect.suspend(() => {
          const taken = [...installations.values()].some((x) =>
            x.app_id === i.app_id && x.organization_id === i.organization_id && x.environment === i.environment
          )
          if (taken) return Effect.fail(new Conflict({ reason: appConflicts.oauth_installations_app_tenant_key }))
          installations.set(i.id, i)
          return Effect.void
        }),
      findInstallation: (tenant, id) => Effect.sync(() => Option.filter(found(installations.get(id)), inTenant(tenant))),
      listInstallations: (tenant, page) =>
        Effect.sync(() => pageFromArray(page, [...installations.values()].filter(inTenant(tenant)), keyOf)),
      installationsOfApp: (appId) =>
        Effect.sync(() =>
          [...installations.values()].filter((i) => i.app_id === appId).sort((a, b) =>
            a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1
          )
        ),
      deleteInstallation: (tenant, id) =>
        Effect.sync(() => {
          const row = Option.filter(found(installations.get(id)), inTenant(tenant))
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
    const byCreation = (a: RefreshToken, b: RefreshToken) =>
      a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1
    return OAuthGrantRepo.of({
      insertGrant: (g) => Effect.sync(() => void grants.set(g.id, g)),
      findGrant: (id) => Effect.sync(() => found(grants.get(id))),
      revokeGrant: (id, at) =>
        Effect.sync(() => {
          const grant = grants.get(id)
          const live = grant !== undefined && grant.revoked_at === null
          if (live) grants.set(id, { ...grant, revoked_at: at })
          for (const t of refresh.values()) {
            if (t.grant_id === id && t.revoked_at === null) refresh.set(t.id, { ...t, revoked_at: at })
          }
          return live
        }),
      liveGrantIds: (appId, tenant) =>
        Effect.sync(() =>
          [...grants.values()].filter((g) =>
            g.app_id === appId && g.revoked_at === null && (tenant === undefined || inTenant(tenant)(g))
          ).map((g) => g.id)
        ),
      insertCode: (c) => Effect.sync(() => void codes.set(c.id, c)),
      findCodeByHash: (hash) => Effect.sync(() => found([...codes.values()].find((c) => c.code_hash === hash))),
      consumeCode: (id, at) =>
        Effect.sync(() => {
          const code = codes.get(id)
          if (code === undefined || code.used_at !== null) return Option.none()
          const next = { ...code, used_at: at }
          codes.set(id, next)
          return Option.some(next)
        }),
      insertRefreshToken: (t) => Effect.sync(() => void refresh.set(t.id, t)),
      findRefreshTokenByHash: (hash) =>
        Effect.sync(() => found([...refresh.values()].find((t) => t.token_hash === hash))),
      consumeRefreshToken: (id, at) =>
        Effect.sync(() => {
          const token = refresh.get(id)
          if (token === undefined || token.used_at !== null || token.revoked_at !== null) return Option.none()
          const next = { ...token, used_at: at }
          refresh.set(id, next)
          return Option.some(next)
        }),
      chainOf: (grantId) => Effect.sync(() => [...refresh.values()].filter((t) => t.grant_id === grantId).sort(byCreation))
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
      signInSession: (id, hash, userId, expiresAt) =>
        Effect.sync(() => {
          const s = sessions.get(id)
          if (s) sessions.set(id, { ...s, token_hash: hash, user_id: userId, expires_at: expiresAt })
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
