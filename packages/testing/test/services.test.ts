import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { Credentials, CredentialRepo, Expenses, LocationModel, Locations, Pagination, Scopes, Tenancy } from "@opsplatform/core"
import { makeFixture, MemoryCore } from "@opsplatform/testing"

describe("core services on memory storage", () => {
  layer(MemoryCore())((it) => {
    it.effect("a token authenticates to its organization, environment, kind and scopes", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const credentials = yield* Credentials.Credentials
        const api = yield* credentials.authenticate(f.tokens.api)
        assert.strictEqual(api.organizationId, f.organizationId)
        assert.strictEqual(api.environment, "live")
        assert.strictEqual(api.kind, "api_key")
        assert.strictEqual(api.scopes.size, Scopes.allScopes.length)
        const sandbox = yield* credentials.authenticate(f.tokens.sandbox)
        assert.strictEqual(sandbox.environment, "sandbox")
        const personal = yield* credentials.authenticate(f.tokens.personal)
        assert.strictEqual(personal.userId, f.userId)
        const device = yield* credentials.authenticate(f.tokens.device)
        assert.strictEqual(device.deviceId, f.deviceId)
        assert.deepStrictEqual([...device.scopes].sort(), [...Scopes.displayScopes].sort())
      }))

    it.effect("unknown, malformed and revoked tokens are all Unauthorized", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const credentials = yield* Credentials.Credentials
        for (const token of ["", "svc_key_nope", "Bearer x", f.tokens.api + "x", "svc_zz_" + f.tokens.api.slice(8)]) {
          assert.strictEqual((yield* Effect.flip(credentials.authenticate(token)))._tag, "Unauthorized")
        }
        const principal = yield* credentials.authenticate(f.tokens.api)
        yield* credentials.revoke(f.live, principal.credentialId)
        assert.strictEqual((yield* Effect.flip(credentials.authenticate(f.tokens.api)))._tag, "Unauthorized")
        // Revoking from another tenant is a 404 and changes nothing.
        const other = yield* credentials.authenticate(f.tokens.narrow)
        assert.strictEqual((yield* Effect.flip(credentials.revoke(f.sandbox, other.credentialId)))._tag, "NotFound")
        yield* credentials.authenticate(f.tokens.narrow)
      }))

    it.effect("an expired OAuth access token stops working at its expiry", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const credentials = yield* Credentials.Credentials
        const issued = yield* credentials.issueOAuthAccess({
          organizationId: f.organizationId,
          environment: "live",
          scopes: ["locations:read"],
          appId: "00000000-0000-4000-8000-00000000aaaa",
          userId: f.userId,
          grantId: "00000000-0000-4000-8000-00000000bbbb",
          expiresAt: new Date(3_600_000).toISOString()
        })
        yield* credentials.authenticate(issued.token)
        yield* TestClock.adjust("3599 seconds")
        yield* credentials.authenticate(issued.token)
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* Effect.flip(credentials.authenticate(issued.token)))._tag, "Unauthorized")
      }))

    it.effect("stores only a hash and a short prefix of a token", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const credentials = yield* Credentials.Credentials
        const repo = yield* CredentialRepo.CredentialRepo
        const principal = yield* credentials.authenticate(f.tokens.api)
        const stored = Option.getOrThrow(yield* repo.find(f.live, principal.credentialId))
        assert.notInclude(JSON.stringify(stored), f.tokens.api)
        assert.match(stored.token_hash, /^[0-9a-f]{64}$/)
        assert.strictEqual(stored.token_prefix, f.tokens.api.slice(0, 12))
      }))

    it.effect("records last use at most once a minute", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const credentials = yield* Credentials.Credentials
        const repo = yield* CredentialRepo.CredentialRepo
        const id = (yield* credentials.authenticate(f.tokens.narrow)).credentialId
        const first = Option.getOrThrow(yield* repo.find(f.live, id)).last_used_at
        assert.isNotNull(first)
        yield* TestClock.adjust("30 seconds")
        yield* credentials.authenticate(f.tokens.narrow)
        assert.strictEqual(Option.getOrThrow(yield* repo.find(f.live, id)).last_used_at, first)
        yield* TestClock.adjust("31 seconds")
        yield* credentials.authenticate(f.tokens.narrow)
        assert.notStrictEqual(Option.getOrThrow(yield* repo.find(f.live, id)).last_used_at, first)
      }))

    it.effect("refuses keys with no, unknown or (for devices) non-display scopes, and personal keys of non-members", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const credentials = yield* Credentials.Credentials
        const tenancy = yield* Tenancy.Tenancy
        const noScopes = yield* Effect.flip(credentials.issue(f.live, { kind: "api_key", scopes: [] }))
        assert.strictEqual(noScopes._tag, "ValidationFailed")
        const unknown = yield* Effect.flip(credentials.issue(f.live, { kind: "api_key", scopes: ["root:all"] }))
        assert.strictEqual(unknown._tag, "ValidationFailed")
        const device = yield* Effect.flip(
          credentials.issue(f.live, { kind: "device", scopes: ["locations:read"], deviceId: f.deviceId })
        )
        assert.strictEqual(device._tag, "ValidationFailed")
        const outsider = yield* tenancy.createUser({ email: `out-${f.organizationId}@example.test`, name: "Out" })
        const personal = yield* Effect.flip(
          credentials.issue(f.live, { kind: "personal", scopes: ["locations:read"], userId: outsider.id })
        )
        assert.strictEqual(personal._tag, "NotFound")
        const foreignDevice = yield* Effect.flip(
          credentials.issue(f.sandbox, { kind: "device", scopes: ["display:read"], deviceId: f.deviceId })
        )
        assert.strictEqual(foreignDevice._tag, "NotFound")
      }))

    it.effect("locations: a new primary demotes the old one; coordinates come in pairs", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const locations = yield* Locations.Locations
        const a = yield* locations.create(f.live, { name: "A", is_primary: true })
        const b = yield* locations.create(f.live, { name: "B" })
        yield* locations.update(f.live, b.id, { is_primary: true })
        assert.isFalse((yield* locations.get(f.live, a.id)).is_primary)
        assert.isTrue((yield* locations.get(f.live, b.id)).is_primary)
        const half = yield* Effect.flip(locations.create(f.live, { name: "C", latitude: 1 }))
        assert.strictEqual(half._tag, "ValidationFailed")
        assert.strictEqual((yield* Effect.flip(locations.get(f.sandbox, a.id)))._tag, "NotFound")
      }))

    it.effect("expenses: status moves follow the table and locked expenses keep their fields", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const expenses = yield* Expenses.Expenses
        const e = yield* expenses.create(f.live, {
          description: " Fuel ",
          category: "fuel",
          amount: "50.00",
          currency: "EUR",
          expense_date: "2026-02-10"
        })
        assert.strictEqual(e.description, "Fuel")
        assert.strictEqual(e.status, "draft")
        const jump = yield* Effect.flip(expenses.update(f.live, e.id, { status: "paid" }))
        assert.strictEqual(jump._tag, "InvalidTransition")
        yield* expenses.update(f.live, e.id, { status: "submitted" })
        yield* expenses.update(f.live, e.id, { status: "approved" })
        const locked = yield* Effect.flip(expenses.update(f.live, e.id, { amount: "60.00" }))
        assert.strictEqual(locked._tag, "Conflict")
        const paid = yield* expenses.update(f.live, e.id, { status: "paid" })
        assert.strictEqual(paid.amount, "50.00")
        const badRef = yield* Effect.flip(expenses.create(f.live, {
          description: "x",
          category: "other",
          amount: "1.00",
          currency: "EUR",
          expense_date: "2026-01-01",
          location_id: LocationModel.LocationId.make("00000000-0000-4000-8000-ffffffffffff")
        }))
        assert.strictEqual(badRef._tag, "NotFound")
        const list = yield* expenses.list(f.live, { status: "paid" }, yield* Pagination.pageRequest({}))
        assert.deepStrictEqual(list.items.map((x) => x.id), [e.id])
        const backwards = yield* Effect.flip(expenses.list(f.live, { date_from: "2026-02-01", date_to: "2026-01-01" }, yield* Pagination.pageRequest({})))
        assert.strictEqual(backwards._tag, "ValidationFailed")
      }))

    it.effect("tenancy: settings are validated, members resolve, outsiders are 404", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const tenancy = yield* Tenancy.Tenancy
        const bad = yield* Effect.flip(tenancy.updateSettings(f.organizationId, { time_zone: "Mars/Olympus", escalation_delay_days: -1 }))
        assert.strictEqual(bad._tag, "ValidationFailed")
        if (bad._tag === "ValidationFailed") assert.deepStrictEqual(bad.details.map((d) => d.field), ["time_zone", "escalation_delay_days"])
        const ok = yield* tenancy.updateSettings(f.organizationId, { time_zone: "Europe/Bucharest" })
        assert.strictEqual(ok.time_zone, "Europe/Bucharest")
        assert.strictEqual((yield* tenancy.getMember(f.organizationId, f.userId)).role, "owner")
        const other = yield* makeFixture()
        assert.strictEqual((yield* Effect.flip(tenancy.getMember(other.organizationId, f.userId)))._tag, "NotFound")
      }))
  })
})
