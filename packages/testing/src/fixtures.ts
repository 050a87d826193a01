import { Effect } from "effect"
import { Credentials, Devices, Scopes, Tenancy } from "@opsplatform/core"
import { cuiControlDigit } from "@opsplatform/core/shared/identifiers"
import type { Tenant } from "@opsplatform/core/shared/tenant"

export interface Fixture {
  readonly organizationId: string
  readonly live: Tenant
  readonly sandbox: Tenant
  readonly userId: string
  readonly deviceId: string
  /** Tokens by purpose; every one is a real credential in the store. */
  readonly tokens: {
    /** API key, live, every scope. */
    readonly api: string
    /** API key, sandbox, every scope. */
    readonly sandbox: string
    /** Personal token of the member, live, every scope. */
    readonly personal: string
    /** Device token, live, the display scopes. */
    readonly device: string
    /** API key, live, holding only `members:read` (lacks every other scope). */
    readonly narrow: string
  }
}

let counter = 0

/**
 * An organization with a member, a device, and credentials of every kind.
 * Each call makes a new organization, so tests sharing one database never see
 * each other's rows.
 */
export const makeFixture = (name?: string) =>
  Effect.gen(function*() {
    const tenancy = yield* Tenancy.Tenancy
    const credentials = yield* Credentials.Credentials
    const n = ++counter
    const org = yield* tenancy.createOrganization({ name: name ?? `Fixture ${n}` })
    const live: Tenant = { organizationId: org.id, environment: "live" }
    const sandbox: Tenant = { organizationId: org.id, environment: "sandbox" }
    const user = yield* tenancy.createUser({
      email: `member-${org.id}@example.test`,
      name: `Member ${n}`,
      password: "correct horse battery staple"
    })
    yield* tenancy.addMember(org.id, user.id, "owner")
    const device = yield* (yield* Devices.Devices).create(live, { name: "Lobby display" })
    const issue = (tenant: Tenant, input: Parameters<typeof credentials.issue>[1]) =>
      Effect.map(credentials.issue(tenant, input), (i) => i.token)
    const tokens = {
      api: yield* issue(live, { kind: "api_key", scopes: Scopes.allScopes, name: "all" }),
      sandbox: yield* issue(sandbox, { kind: "api_key", scopes: Scopes.allScopes, name: "sandbox" }),
      personal: yield* issue(live, { kind: "personal", scopes: Scopes.allScopes, userId: user.id }),
      device: device.token,
      narrow: yield* issue(live, { kind: "api_key", scopes: ["members:read"], name: "narrow" })
    }
    return {
      organizationId: org.id,
      live,
      sandbox,
      userId: user.id,
      deviceId: device.device.id,
      tokens
    } satisfies Fixture
  }).pipe(Effect.orDie)

const issuedCuis = new Set<string>()

/**
 * A valid Romanian CUI that no other call in this process returns: 9 random
 * leading digits and the control digit. Organization VAT numbers are unique
 * across a database that test runs share, so each run draws new ones.
 */
export const uniqueCui = (): string => {
  for (;;) {
    const body = String(100_000_000 + Math.floor(Math.random() * 900_000_000))
    const cui = `${body}${cuiControlDigit(body)}`
    if (!issuedCuis.has(cui)) {
      issuedCuis.add(cui)
      return cui
    }
  }
}
