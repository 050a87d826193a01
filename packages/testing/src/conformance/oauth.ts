import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import {
  type AuthorizationCode,
  type BrowserSession,
  type Grant,
  InstallationId,
  OAuthAppId,
  type PendingAuthorization,
  type RefreshToken,
  type StoredApp,
  type StoredInstallation
} from "@opsplatform/core/oauth/model"
import { OAuthAppRepo } from "@opsplatform/core/oauth/OAuthAppRepo"
import { OAuthGrantRepo } from "@opsplatform/core/oauth/OAuthGrantRepo"
import { OAuthSessionRepo } from "@opsplatform/core/oauth/OAuthSessionRepo"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { Transactor } from "@opsplatform/core/shared/Transactor"
import { UserId } from "@opsplatform/core/tenancy/model"
import { TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"
import { freshOrganization, timestamps } from "./support.ts"

type Storage = Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>

const app = (id: string, at: string, overrides: Partial<StoredApp> = {}): StoredApp => ({
  id: OAuthAppId.make(id),
  client_id: `app_${id.replace(/-/g, "")}`,
  name: "Conformance app",
  type: "confidential",
  redirect_uris: ["https://app.example/callback", "http://127.0.0.1/cb"],
  scopes: ["locations:read", "expenses:read"],
  grant_types: ["authorization_code", "refresh_token", "client_credentials"],
  secret_hash: `h-secret-${id}`,
  secret_prefix: "svc_cs_abcd",
  secret_rotated_at: null,
  verified_at: null,
  created_at: at,
  updated_at: at,
  ...overrides
})

const freshUser = Effect.gen(function*() {
  const ids = yield* Ids
  const id = UserId.make(yield* ids.uuid)
  yield* Effect.orDie((yield* TenancyRepo).insertUser(
    { id, email: `oauth-${id}@example.test`, name: "Member", created_at: timestamps(1)[0]! },
    null
  ))
  return id
})

/** An app, a grant of it and a user, ready for codes and refresh tokens. */
const grantFixture = Effect.gen(function*() {
  const apps = yield* OAuthAppRepo
  const grants = yield* OAuthGrantRepo
  const ids = yield* Ids
  const org = yield* freshOrganization
  const userId = yield* freshUser
  const [t0] = timestamps(1)
  const a = app(yield* ids.uuid, t0!)
  yield* Effect.orDie(apps.insertApp(org.live, a))
  const grant: Grant = {
    id: yield* ids.uuid,
    app_id: a.id,
    kind: "authorization_code",
    organization_id: org.id,
    environment: "live",
    user_id: userId,
    installation_id: null,
    scopes: ["locations:read"],
    created_at: t0!,
    refresh_until: "2026-04-01T00:00:00.000Z",
    revoked_at: null
  }
  yield* grants.insertGrant(org.live, grant)
  return { org, userId, app: a, grant }
})

/** An unused code of the fixture's app and member. */
const newCode = (f: Effect.Success<typeof grantFixture>, createdAt: string, expiresAt: string) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const code: AuthorizationCode = {
      id: yield* ids.uuid,
      code_hash: `h-code-${yield* ids.uuid}`,
      app_id: f.app.id,
      grant_id: yield* ids.uuid,
      organization_id: f.org.id,
      environment: "live",
      user_id: f.userId,
      redirect_uri: "https://app.example/callback",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      scopes: ["locations:read", "expenses:read"],
      created_at: createdAt,
      expires_at: expiresAt,
      used_at: null
    }
    yield* (yield* OAuthGrantRepo).insertCode(f.org.live, code)
    return code
  })

/**
 * Runs `consume` 20 times at once, each in its own transaction held open a
 * moment after the update, so on a server the others wait on the row while the
 * first has not committed. Returns how many got the row.
 */
const race = (consume: Effect.Effect<Option.Option<unknown>>) =>
  Effect.gen(function*() {
    const tx = yield* Transactor
    const outcomes = yield* Effect.all(
      Array.from({ length: 20 }, () =>
        tx.withTransaction(Effect.gen(function*() {
          const won = yield* consume
          yield* Effect.sleep("10 millis")
          return Option.isSome(won)
        }))),
      { concurrency: "unbounded" }
    )
    return outcomes.filter((won) => won).length
  })

const refreshToken = (id: string, grant: Grant, at: string, parentId: string | null = null): RefreshToken => ({
  id,
  token_hash: `h-rt-${id}`,
  grant_id: grant.id,
  app_id: grant.app_id,
  parent_id: parentId,
  created_at: at,
  expires_at: "2026-02-01T00:00:00.000Z",
  used_at: null,
  revoked_at: null
})

/** Ids of the app's live grants in every organization environment. */
const liveEverywhere = (appId: string) =>
  Effect.flatMap(OAuthGrantRepo, (grants) => grants.liveGrantsOfApp(appId)).pipe(
    Effect.map((live) => live.map((g) => g.id))
  )

/** The contracts of OAuthAppRepo, OAuthGrantRepo and OAuthSessionRepo. */
export const oauthRepoConformance = (name: string, storage: Storage) =>
  describe(`OAuth repositories conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("keeps apps, finds them by id and client id, and shows them only to their owner", () =>
        Effect.gen(function*() {
          const repo = yield* OAuthAppRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const mine = app(yield* ids.uuid, t0!)
          const operators = app(yield* ids.uuid, t1!, { type: "public", secret_hash: null, secret_prefix: null })
          yield* Effect.orDie(repo.insertApp(a.live, mine))
          yield* Effect.orDie(repo.insertApp(null, operators))
          assert.deepStrictEqual(yield* repo.findOwnedApp(a.live, mine.id), Option.some(mine))
          assert.isTrue(Option.isNone(yield* repo.findOwnedApp(a.sandbox, mine.id)))
          assert.isTrue(Option.isNone(yield* repo.findOwnedApp(b.live, mine.id)))
          assert.deepStrictEqual(yield* repo.findAppByClientId(mine.client_id), Option.some(mine))
          assert.deepStrictEqual(yield* repo.findAppById(operators.id), Option.some(operators))
          assert.deepStrictEqual(
            (yield* repo.findAppsByIds([mine.id, operators.id])).map((x) => x.id).sort(),
            [mine.id, operators.id].sort()
          )
          const page = yield* pageRequest({})
          assert.deepStrictEqual((yield* repo.listOwnedApps(a.live, page)).items.map((x) => x.id), [mine.id])
          assert.strictEqual((yield* repo.listOwnedApps(b.live, page)).meta.total, 0)
          const renamed = { ...mine, name: "Renamed", scopes: ["locations:read"], redirect_uris: ["https://x.example/cb"], updated_at: t1! }
          yield* repo.updateApp(a.live, renamed)
          assert.deepStrictEqual(yield* repo.findAppById(mine.id), Option.some(renamed))
          const duplicate = yield* Effect.flip(repo.insertApp(a.live, { ...app(yield* ids.uuid, t0!), client_id: mine.client_id }))
          assert.strictEqual(duplicate._tag, "Conflict")
        }))

      it.effect("marks an app verified only through the operator's call; an owner's update leaves the mark", () =>
        Effect.gen(function*() {
          const repo = yield* OAuthAppRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const mine = app(yield* ids.uuid, t0!)
          yield* Effect.orDie(repo.insertApp(a.live, mine))
          const verified = { ...mine, verified_at: t1! }
          assert.deepStrictEqual(yield* repo.setAppVerified(mine.client_id, t1!), Option.some(verified))
          // An update carrying another verified_at (as an owner's would) does not change it.
          yield* repo.updateApp(a.live, { ...mine, name: "Renamed", verified_at: null })
          assert.deepStrictEqual(yield* repo.findAppByClientId(mine.client_id), Option.some({ ...verified, name: "Renamed" }))
          assert.deepStrictEqual(
            yield* repo.setAppVerified(mine.client_id, null),
            Option.some({ ...verified, name: "Renamed", verified_at: null })
          )
          assert.isTrue(Option.isNone(yield* repo.setAppVerified("app_unknown", t1!)))
        }))

      it.effect("installs an app once per organization environment and keeps installations per tenant", () =>
        Effect.gen(function*() {
          const repo = yield* OAuthAppRepo
          const ids = yield* Ids
          const owner = yield* freshOrganization
          const other = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const a = app(yield* ids.uuid, t0!)
          yield* Effect.orDie(repo.insertApp(owner.live, a))
          const installation = (tenant: Tenant, at: string): Effect.Effect<StoredInstallation> =>
            Effect.map(ids.uuid, (id) => ({
              id: InstallationId.make(id),
              app_id: a.id,
              organization_id: tenant.organizationId,
              environment: tenant.environment,
              scopes: ["locations:read"],
              created_at: at
            }))
          const live = yield* installation(other.live, t0!)
          const sandbox = yield* installation(other.sandbox, t1!)
          yield* Effect.orDie(repo.insertInstallation(other.live, live))
          yield* Effect.orDie(repo.insertInstallation(other.sandbox, sandbox))
          const twice = yield* Effect.flip(repo.insertInstallation(other.live, yield* installation(other.live, t1!)))
          assert.strictEqual(twice._tag, "Conflict")
          assert.deepStrictEqual(yield* repo.findInstallation(other.live, live.id), Option.some(live))
          assert.isTrue(Option.isNone(yield* repo.findInstallation(other.sandbox, live.id)))
          assert.isTrue(Option.isNone(yield* repo.findInstallation(owner.live, live.id)))
          assert.deepStrictEqual((yield* repo.installationsOfApp(a.id)).map((i) => i.id), [live.id, sandbox.id])
          const page = yield* pageRequest({})
          assert.deepStrictEqual((yield* repo.listInstallations(other.live, page)).items, [live])
          assert.isTrue(Option.isNone(yield* repo.deleteInstallation(owner.live, live.id)))
          assert.deepStrictEqual(yield* repo.deleteInstallation(other.live, live.id), Option.some(live))
          assert.deepStrictEqual((yield* repo.installationsOfApp(a.id)).map((i) => i.id), [sandbox.id])
        }))

      it.effect("deleting an app removes its installations, grants, codes and refresh tokens", () =>
        Effect.gen(function*() {
          const apps = yield* OAuthAppRepo
          const grants = yield* OAuthGrantRepo
          const ids = yield* Ids
          const f = yield* grantFixture
          const [t0] = timestamps(1)
          const rt = refreshToken(yield* ids.uuid, f.grant, t0!)
          yield* grants.insertRefreshToken(f.org.live, rt)
          assert.isTrue(yield* apps.deleteApp(f.org.live, f.app.id))
          assert.isFalse(yield* apps.deleteApp(f.org.live, f.app.id))
          assert.isTrue(Option.isNone(yield* grants.findGrant(f.grant.id)))
          assert.isTrue(Option.isNone(yield* grants.findRefreshTokenByHash(rt.token_hash)))
        }))

      it.effect("a code is consumed once; the second consume finds nothing", () =>
        Effect.gen(function*() {
          const grants = yield* OAuthGrantRepo
          const f = yield* grantFixture
          const [t0, t1, t2] = timestamps(3)
          const code = yield* newCode(f, t0!, t1!)
          assert.deepStrictEqual(yield* grants.findCodeByHash(code.code_hash), Option.some(code))
          assert.deepStrictEqual(yield* grants.consumeCode(f.org.live, code.id, t1!), Option.some({ ...code, used_at: t1! }))
          assert.isTrue(Option.isNone(yield* grants.consumeCode(f.org.live, code.id, t2!)))
          assert.strictEqual(Option.getOrThrow(yield* grants.findCodeByHash(code.code_hash)).used_at, t1)
        }))

      it.effect("refresh tokens form a chain; a used or revoked one cannot be consumed", () =>
        Effect.gen(function*() {
          const grants = yield* OAuthGrantRepo
          const ids = yield* Ids
          const f = yield* grantFixture
          const [t0, t1, t2] = timestamps(3)
          const first = refreshToken(yield* ids.uuid, f.grant, t0!)
          yield* grants.insertRefreshToken(f.org.live, first)
          assert.deepStrictEqual(yield* grants.findRefreshTokenByHash(first.token_hash), Option.some(first))
          assert.deepStrictEqual(yield* grants.consumeRefreshToken(f.org.live, first.id, t1!), Option.some({ ...first, used_at: t1! }))
          assert.isTrue(Option.isNone(yield* grants.consumeRefreshToken(f.org.live, first.id, t2!)))
          const second = refreshToken(yield* ids.uuid, f.grant, t1!, first.id)
          yield* grants.insertRefreshToken(f.org.live, second)
          assert.deepStrictEqual((yield* grants.chainOf(f.org.live, f.grant.id)).map((t) => [t.id, t.parent_id]), [
            [first.id, null],
            [second.id, first.id]
          ])
          assert.isTrue(yield* grants.revokeGrant(f.org.live, f.grant.id, t2!))
          assert.isFalse(yield* grants.revokeGrant(f.org.live, f.grant.id, t2!))
          assert.strictEqual(Option.getOrThrow(yield* grants.findGrant(f.grant.id)).revoked_at, t2)
          assert.strictEqual(Option.getOrThrow(yield* grants.findRefreshTokenByHash(second.token_hash)).revoked_at, t2)
          assert.isTrue(Option.isNone(yield* grants.consumeRefreshToken(f.org.live, second.id, t2!)))
          assert.deepStrictEqual(yield* liveEverywhere(f.app.id), [])
        }))

      it.effect("lists an app's live grants per tenant or everywhere", () =>
        Effect.gen(function*() {
          const grants = yield* OAuthGrantRepo
          const ids = yield* Ids
          const f = yield* grantFixture
          const [t0] = timestamps(1)
          const sandbox: Grant = { ...f.grant, id: yield* ids.uuid, environment: "sandbox" }
          yield* grants.insertGrant(f.org.sandbox, sandbox)
          assert.deepStrictEqual(yield* grants.liveGrantIds(f.org.live, f.app.id), [f.grant.id])
          assert.deepStrictEqual(yield* grants.liveGrantIds(f.org.sandbox, f.app.id), [sandbox.id])
          assert.deepStrictEqual([...(yield* liveEverywhere(f.app.id))].sort(), [f.grant.id, sandbox.id].sort())
          yield* grants.revokeGrant(f.org.sandbox, sandbox.id, t0!)
          assert.deepStrictEqual(yield* liveEverywhere(f.app.id), [f.grant.id])
        }))

      it.effect("an app is changed and deleted only through its owner", () =>
        Effect.gen(function*() {
          const repo = yield* OAuthAppRepo
          const f = yield* grantFixture
          const stranger = yield* freshOrganization
          const [, t1] = timestamps(2)
          yield* repo.updateApp(f.org.sandbox, { ...f.app, name: "Taken over", updated_at: t1! })
          yield* repo.updateApp(stranger.live, { ...f.app, name: "Taken over", updated_at: t1! })
          assert.deepStrictEqual(yield* repo.findAppById(f.app.id), Option.some(f.app))
          assert.isFalse(yield* repo.deleteApp(f.org.sandbox, f.app.id))
          assert.isFalse(yield* repo.deleteApp(stranger.live, f.app.id))
          assert.isTrue(Option.isSome(yield* repo.findAppById(f.app.id)))
        }))

      it.effect("a grant, its codes and its refresh chain are reached only through their tenant", () =>
        Effect.gen(function*() {
          const grants = yield* OAuthGrantRepo
          const ids = yield* Ids
          const f = yield* grantFixture
          const stranger = yield* freshOrganization
          const [t0, t1, t2] = timestamps(3)
          const code = yield* newCode(f, t0!, t2!)
          assert.isTrue(Option.isNone(yield* grants.consumeCode(f.org.sandbox, code.id, t1!)))
          assert.isTrue(Option.isNone(yield* grants.consumeCode(stranger.live, code.id, t1!)))
          assert.strictEqual(Option.getOrThrow(yield* grants.findCodeByHash(code.code_hash)).used_at, null)
          const token = refreshToken(yield* ids.uuid, f.grant, t0!)
          yield* grants.insertRefreshToken(f.org.live, token)
          const planted = refreshToken(yield* ids.uuid, f.grant, t0!)
          assert.isTrue(Exit.hasDies(yield* Effect.exit(grants.insertRefreshToken(stranger.live, planted))))
          assert.isTrue(Option.isNone(yield* grants.findRefreshTokenByHash(planted.token_hash)))
          assert.isTrue(Option.isNone(yield* grants.consumeRefreshToken(f.org.sandbox, token.id, t1!)))
          assert.deepStrictEqual(yield* grants.chainOf(stranger.live, f.grant.id), [])
          assert.deepStrictEqual(yield* grants.liveGrantIds(f.org.sandbox, f.app.id), [])
          assert.isFalse(yield* grants.revokeGrant(stranger.live, f.grant.id, t1!))
          assert.strictEqual(Option.getOrThrow(yield* grants.findGrant(f.grant.id)).revoked_at, null)
          assert.strictEqual(Option.getOrThrow(yield* grants.findRefreshTokenByHash(token.token_hash)).revoked_at, null)
          assert.isTrue(Option.isSome(yield* grants.consumeRefreshToken(f.org.live, token.id, t1!)))
        }))

      it.effect("of 20 concurrent consumes of one refresh token, exactly one wins", () =>
        Effect.gen(function*() {
          const grants = yield* OAuthGrantRepo
          const ids = yield* Ids
          const f = yield* grantFixture
          const [t0, t1] = timestamps(2)
          const token = refreshToken(yield* ids.uuid, f.grant, t0!)
          yield* grants.insertRefreshToken(f.org.live, token)
          assert.strictEqual(yield* race(grants.consumeRefreshToken(f.org.live, token.id, t1!)), 1)
          assert.strictEqual(Option.getOrThrow(yield* grants.findRefreshTokenByHash(token.token_hash)).used_at, t1)
        }))

      it.effect("of 20 concurrent consumes of one code, exactly one wins", () =>
        Effect.gen(function*() {
          const grants = yield* OAuthGrantRepo
          const f = yield* grantFixture
          const [t0, t1] = timestamps(2)
          const code = yield* newCode(f, t0!, t1!)
          assert.strictEqual(yield* race(grants.consumeCode(f.org.live, code.id, t1!)), 1)
        }))

      it.effect("sessions rotate their token at sign-in; a pending request is taken once", () =>
        Effect.gen(function*() {
          const sessions = yield* OAuthSessionRepo
          const f = yield* grantFixture
          const ids = yield* Ids
          const [t0, t1, t2] = timestamps(3)
          const session: BrowserSession = { id: yield* ids.uuid, token_hash: `h-s-${yield* ids.uuid}`, user_id: null, created_at: t0!, expires_at: t2! }
          yield* sessions.insertSession(session)
          assert.deepStrictEqual(yield* sessions.findSessionByHash(session.token_hash), Option.some(session))
          const rotated = `h-s2-${yield* ids.uuid}`
          yield* sessions.signInSession({ ...session, token_hash: rotated, user_id: f.userId, expires_at: t2! })
          assert.isTrue(Option.isNone(yield* sessions.findSessionByHash(session.token_hash)))
          assert.deepStrictEqual(
            yield* sessions.findSessionByHash(rotated),
            Option.some({ ...session, token_hash: rotated, user_id: f.userId, expires_at: t2! })
          )
          const pending: PendingAuthorization = {
            id: yield* ids.uuid,
            handle_hash: `h-p-${yield* ids.uuid}`,
            session_id: session.id,
            app_id: f.app.id,
            redirect_uri: "http://127.0.0.1:5555/cb",
            scopes: ["locations:read"],
            state: "xyz",
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            created_at: t0!,
            expires_at: t1!
          }
          yield* sessions.insertPending(pending)
          assert.deepStrictEqual(yield* sessions.findPendingByHash(pending.handle_hash), Option.some(pending))
          assert.deepStrictEqual(yield* sessions.takePending(pending.id), Option.some(pending))
          assert.isTrue(Option.isNone(yield* sessions.takePending(pending.id)))
        }))

      it.effect("purges expired pending requests and sessions, keeping live ones", () =>
        Effect.gen(function*() {
          const sessions = yield* OAuthSessionRepo
          const f = yield* grantFixture
          const ids = yield* Ids
          const past = "2000-01-01T00:00:00.000Z"
          const cutoff = "2000-01-02T00:00:00.000Z"
          const future = "2999-01-01T00:00:00.000Z"
          const live = { id: yield* ids.uuid, token_hash: `h-s-${yield* ids.uuid}`, user_id: null, created_at: past, expires_at: future }
          const dead = { ...live, id: yield* ids.uuid, token_hash: `h-s-${yield* ids.uuid}`, expires_at: past }
          yield* sessions.insertSession(live)
          yield* sessions.insertSession(dead)
          const pending = (sessionId: string, expires: string) =>
            Effect.map(ids.uuid, (id): PendingAuthorization => ({
              id,
              handle_hash: `h-p-${id}`,
              session_id: sessionId,
              app_id: f.app.id,
              redirect_uri: "https://app.example/callback",
              scopes: ["locations:read"],
              state: null,
              code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
              created_at: past,
              expires_at: expires
            }))
          const keep = yield* pending(live.id, future)
          const expired = yield* pending(live.id, past)
          yield* sessions.insertPending(keep)
          yield* sessions.insertPending(expired)
          assert.isAtLeast(yield* sessions.purgeExpired(cutoff), 2)
          assert.isTrue(Option.isSome(yield* sessions.findSessionByHash(live.token_hash)))
          assert.isTrue(Option.isNone(yield* sessions.findSessionByHash(dead.token_hash)))
          assert.isTrue(Option.isSome(yield* sessions.findPendingByHash(keep.handle_hash)))
          assert.isTrue(Option.isNone(yield* sessions.findPendingByHash(expired.handle_hash)))
        }))
    })
  })
