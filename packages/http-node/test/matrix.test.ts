import { Context, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Credentials, Scopes } from "@opsplatform/core"
import { type Fixture, makeFixture } from "@opsplatform/testing"
import { Api } from "../src/api/Api.ts"
import { RequiredScope } from "../src/api/security.ts"
import { matrixFactories } from "./support/matrix.ts"
import { call, startTestServer, type TestServer } from "./support/server.ts"
import { testDatabases } from "./support/databases.ts"

interface Endpoint {
  readonly group: string
  readonly name: string
  readonly method: string
  readonly path: string
  readonly scope: string | undefined
  readonly params: ReadonlyArray<string>
}

/** Every endpoint of the /v1 definition: the matrix covers endpoints added later with no extra work. */
const endpoints: ReadonlyArray<Endpoint> = Object.values(Api.groups).flatMap((group: any) =>
  Object.values(group.endpoints).map((endpoint: any) => ({
    group: group.identifier,
    name: endpoint.identifier,
    method: endpoint.method,
    path: endpoint.path,
    scope: Context.getOrUndefined(endpoint.annotations, RequiredScope),
    params: [...String(endpoint.path).matchAll(/:(\w+)/g)].map((m) => m[1]!)
  }))
)

const fill = (path: string, params: Record<string, string>) => path.replace(/:(\w+)/g, (_, name) => params[name] ?? name)

describe("every /v1 endpoint declares a scope from the catalog", () => {
  it.each(endpoints.map((e) => [`${e.method} ${e.path}`, e]))("%s", (_, e) => {
    expect(e.scope).toBeDefined()
    expect(Scopes.isScope(e.scope!)).toBe(true)
  })
})

const db = testDatabases()[testDatabases().length - 1]!

describe(`endpoint matrix (${db.name})`, () => {
  let server: TestServer
  let owner: Fixture
  let stranger: Fixture
  /** One key per scope, holding every scope except that one. */
  const lacking = new Map<string, string>()
  /** Path parameters of a resource of `owner` (live), per group. */
  const resources = new Map<string, Record<string, string>>()

  beforeAll(async () => {
    server = await startTestServer(db.choice())
    owner = await server.run(makeFixture("Matrix owner"))
    stranger = await server.run(makeFixture("Matrix stranger"))
    await server.run(Effect.gen(function*() {
      const credentials = yield* Credentials.Credentials
      for (const scope of Scopes.allScopes) {
        const issued = yield* credentials.issue(owner.live, {
          kind: "api_key",
          scopes: Scopes.allScopes.filter((s) => s !== scope),
          name: `all but ${scope}`
        })
        lacking.set(scope, issued.token)
      }
    }).pipe(Effect.orDie))
    for (const group of new Set(endpoints.filter((e) => e.params.length > 0).map((e) => e.group))) {
      const factory = matrixFactories[group]?.create
      if (factory) resources.set(group, await factory(server, owner))
    }
  }, 120_000)
  afterAll(() => server.close())

  const bodyOf = (e: Endpoint) => matrixFactories[e.group]?.bodies?.[e.name]

  for (const e of endpoints) {
    describe(`${e.method} ${e.path}`, () => {
      const request = (token: string | undefined, params: Record<string, string> = {}) =>
        call(server, e.method, fill(e.path, params), {
          token,
          ...(bodyOf(e) !== undefined ? { body: bodyOf(e) } : {})
        })

      it("answers 401 in the envelope without a credential", async () => {
        const res = await request(undefined, resources.get(e.group) ?? {})
        expect(res.status).toBe(401)
        expect(res.json).toMatchObject({ data: null, error: { code: "unauthorized" } })
      })

      it("answers 403 insufficient_scope to a credential lacking exactly its scope", async () => {
        const res = await request(lacking.get(e.scope!), resources.get(e.group) ?? {})
        expect(res.status).toBe(403)
        expect(res.json.error.code).toBe("insufficient_scope")
      })

      it("answers 404 to a credential naming the owner in Opsplatform-Organization without a grant, as for no organization", async () => {
        const params = resources.get(e.group) ?? {}
        const send = (organization: string) =>
          call(server, e.method, fill(e.path, params), {
            token: stranger.tokens.api,
            headers: { "opsplatform-organization": organization },
            ...(bodyOf(e) !== undefined ? { body: bodyOf(e) } : {})
          })
        const owned = await send(owner.organizationId)
        const nobody = await send("00000000-0000-4000-8000-0000000000ff")
        expect(owned.status).toBe(404)
        expect(owned.json.error.message).toBe(`No organization with id '${owner.organizationId}'`)
        expect(nobody.json.error.message).toBe("No organization with id '00000000-0000-4000-8000-0000000000ff'")
        expect(owned.json.error.code).toBe(nobody.json.error.code)
      })

      if (e.params.length > 0) {
        it("answers 400 validation_failed naming every malformed path id, never a 500", async () => {
          const res = await request(owner.tokens.api, Object.fromEntries(e.params.map((p) => [p, "not-a-uuid"])))
          expect(res.status).toBe(400)
          expect(res.json.error.code).toBe("validation_failed")
          expect(res.json.error.details.map((d: { field: string }) => d.field).sort()).toEqual([...e.params].sort())
        })

        it("answers 404 to another organization and to the other environment", async () => {
          const params = resources.get(e.group)
          expect(params, `test/support/matrix.ts has no factory for group '${e.group}'`).toBeDefined()
          const foreign = await request(stranger.tokens.api, params)
          expect(foreign.status).toBe(404)
          expect(foreign.json.error.code).toBe("not_found")
          const otherEnvironment = await request(owner.tokens.sandbox, params)
          expect(otherEnvironment.status).toBe(404)
          expect(otherEnvironment.json.error.code).toBe("not_found")
        })
      }
    })
  }
})
