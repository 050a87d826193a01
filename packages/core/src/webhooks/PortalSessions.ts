import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import type { Digest, SecureRandom } from "effect/crypto"
import { NotFound } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { generateToken, hashToken } from "../shared/secrets.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis as iso } from "../shared/time.ts"
import {
  DEFAULT_PORTAL_SECONDS,
  type PortalSession,
  type PortalSessionCreate,
  PortalSessionId,
  type PortalTheme,
  type StoredPortalSession,
  toPortalSession
} from "./model.ts"
import { PortalSessionRepo } from "./PortalSessionRepo.ts"
import { type PortalLinkRefusal, portalLinkRefusal, portalScopes, portalSessionActive } from "./rules.ts"

/** The link's token and the cookie's: 256 random bits each, only their hashes stored (docs/decisions.md, "Webhook portal"). */
export const PORTAL_LINK_PREFIX = "svc_pl_"
export const PORTAL_COOKIE_PREFIX = "svc_ps_"

/** Longer than any token the portal issues: hashing stops there. */
const MAX_TOKEN_LENGTH = 128

/** Expired sessions are kept this long, so a late click still hears "expired" rather than "unknown". */
const KEEP_EXPIRED_MS = 60 * 60 * 1000

export class PortalLinkRefused extends Schema.TaggedError<PortalLinkRefused>()("PortalLinkRefused", {
  reason: Schema.Literals(["unknown", "used", "expired", "revoked"])
}) {
  get status(): number {
    return this.reason === "unknown" ? 404 : 410
  }
}

/** An opened portal session: whose it is, what it may do, how it looks. */
export interface PortalAccess {
  readonly id: PortalSessionId
  readonly tenant: Tenant
  readonly scopes: ReadonlyArray<"webhooks:read" | "webhooks:write">
  readonly readOnly: boolean
  /** The event types it is limited to; null for every type. */
  readonly eventTypes: ReadonlyArray<string> | null
  readonly frameAncestors: ReadonlyArray<string>
  readonly theme: PortalTheme
  readonly expiresAt: string
}

const accessOf = (s: StoredPortalSession): PortalAccess => ({
  id: s.id,
  tenant: { organizationId: s.organization_id, environment: s.environment },
  scopes: portalScopes(s),
  readOnly: s.read_only,
  eventTypes: s.event_types,
  frameAncestors: s.frame_ancestors,
  theme: s.theme,
  expiresAt: s.expires_at
})

/**
 * Webhook portal sessions: minted by the API for the caller's organization
 * environment as a one-time link, exchanged once for a browser session, and
 * revocable. The portal's pages act through the Webhooks service with the
 * session's tenant and scopes.
 */
export class PortalSessions extends Context.Service<PortalSessions, {
  readonly create: (tenant: Tenant, input: PortalSessionCreate) => Effect.Effect<{ readonly session: PortalSession; readonly linkToken: string }>
  /** The link's one use: a cookie token for the browser, or why not. */
  readonly open: (linkToken: string) => Effect.Effect<{ readonly cookieToken: string; readonly access: PortalAccess }, PortalLinkRefused>
  /** The session a browser's cookie belongs to, while it is open. */
  readonly authenticate: (cookieToken: string) => Effect.Effect<Option.Option<PortalAccess>>
  readonly revoke: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound>
}>()("@opsplatform/core/webhooks/PortalSessions") {
  static readonly layer: Layer.Layer<
    PortalSessions,
    never,
    PortalSessionRepo | Ids | Digest.Digest | SecureRandom.SecureRandom
  > = Layer.effect(
    PortalSessions,
    Effect.gen(function*() {
      const repo = yield* PortalSessionRepo
      const ids = yield* Ids
      const crypto = yield* Effect.context<Digest.Digest | SecureRandom.SecureRandom>()
      const hash = (token: string) => Effect.provideContext(hashToken(token), crypto)
      const token = (prefix: string) => Effect.provideContext(generateToken(prefix), crypto)
      const isId = Schema.is(PortalSessionId)

      return PortalSessions.of({
        create: Effect.fn("PortalSessions.create")(function*(tenant, input) {
          const now = yield* Clock.currentTimeMillis
          yield* repo.purgeExpired(iso(now - KEEP_EXPIRED_MS))
          const linkToken = yield* token(PORTAL_LINK_PREFIX)
          const stored: StoredPortalSession = {
            id: yield* newId(ids, PortalSessionId),
            organization_id: tenant.organizationId,
            environment: tenant.environment,
            link_hash: yield* hash(linkToken),
            cookie_hash: null,
            read_only: input.read_only ?? false,
            event_types: input.event_types ?? null,
            frame_ancestors: input.frame_ancestors ?? [],
            theme: input.theme ?? {},
            created_at: iso(now),
            expires_at: iso(now + (input.expires_in_seconds ?? DEFAULT_PORTAL_SECONDS) * 1000),
            exchanged_at: null,
            revoked_at: null
          }
          yield* repo.insert(tenant, stored)
          return { session: toPortalSession(stored), linkToken }
        }),
        open: Effect.fn("PortalSessions.open")(function*(linkToken) {
          if (linkToken.length > MAX_TOKEN_LENGTH || !linkToken.startsWith(PORTAL_LINK_PREFIX)) {
            return yield* new PortalLinkRefused({ reason: "unknown" })
          }
          const now = yield* Clock.currentTimeMillis
          const linkHash = yield* hash(linkToken)
          const cookieToken = yield* token(PORTAL_COOKIE_PREFIX)
          const claimed = yield* repo.claimLink(linkHash, yield* hash(cookieToken), iso(now))
          if (Option.isSome(claimed)) return { cookieToken, access: accessOf(claimed.value) }
          const seen = yield* repo.findByLinkHash(linkHash)
          const reason: PortalLinkRefusal = portalLinkRefusal(Option.getOrUndefined(seen), now)
          return yield* new PortalLinkRefused({ reason })
        }),
        authenticate: Effect.fn("PortalSessions.authenticate")(function*(cookieToken) {
          if (cookieToken.length > MAX_TOKEN_LENGTH || !cookieToken.startsWith(PORTAL_COOKIE_PREFIX)) return Option.none()
          const found = yield* repo.findByCookieHash(yield* hash(cookieToken))
          const now = yield* Clock.currentTimeMillis
          return Option.map(Option.filter(found, (s) => portalSessionActive(s, now)), accessOf)
        }),
        revoke: Effect.fn("PortalSessions.revoke")(function*(tenant, id) {
          const revoked = isId(id) && (yield* repo.revoke(tenant, id, iso(yield* Clock.currentTimeMillis)))
          if (!revoked) return yield* new NotFound({ resource: "portal session", id })
        })
      })
    })
  )
}
