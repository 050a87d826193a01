import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect } from "effect"
import { Credentials, GrantRules, Scopes } from "@opsplatform/core"
import { type Fixture, makeFixture, uniqueCui } from "@opsplatform/testing"
import { Api } from "../../src/api/Api.ts"
import { RequiredScope } from "../../src/api/security.ts"
import { ApiTestLayer, call, invalidFields, type RawResponse } from "../support/api.ts"

type Method = "GET" | "POST" | "PATCH" | "DELETE"

const as = (token: string, method: Method, path: string, body?: unknown, client?: string) =>
  call(method, path, {
    token,
    ...(body === undefined ? {} : { body }),
    ...(client === undefined ? {} : { headers: { "opsplatform-organization": client } })
  })

/** An organization with its VAT number set. */
const withVat = (name: string) =>
  Effect.gen(function*() {
    const f = yield* makeFixture(name)
    const vat = uniqueCui()
    const set = yield* as(f.tokens.api, "PATCH", "/v1/organization", { vat_number: `RO ${vat}` })
    expect(set.json.data.vat_number).toBe(vat)
    return { ...f, vat }
  })

const ask = (from: Fixture, vat: string, role: "cabinet" | "client", scope?: "read" | "bookkeeping", token = from.tokens.api) =>
  as(token, "POST", "/v1/cabinet/access-grants", { counterparty_vat_number: vat, role, ...(scope ? { scope } : {}) })

/** A grant the cabinet asked for and the client approved. */
const activeGrant = (cabinet: Fixture, client: Fixture & { vat: string }, scope: "read" | "bookkeeping" = "read") =>
  Effect.gen(function*() {
    const asked = yield* ask(cabinet, client.vat, "cabinet", scope)
    expect(asked.status).toBe(201)
    const approved = yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${asked.json.data.id}/approve`)
    expect(approved.status).toBe(200)
    return asked.json.data.id as string
  })

/** A response without what differs between any two requests: its request id, and the id and time of what it made. */
const shape = (r: RawResponse) => {
  const json = JSON.parse(JSON.stringify(r.json))
  if (json.error) delete json.error.requestId
  for (const item of [json.data].flat()) {
    if (item && typeof item === "object") {
      delete item.id
      delete item.requested_at
      delete item.counterparty_vat_number
    }
  }
  return { status: r.status, json }
}

const auditActions = (token: string) =>
  Effect.map(as(token, "GET", "/v1/audit-events?perPage=100"), (r) =>
    (r.json.data as Array<any>).map((e) => `${e.action}:${e.outcome}`).reverse())

describe("/v1/cabinet/access-grants and acting for a client, over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("the organization's VAT number: a checked CUI, stored without RO, one organization per number", () =>
      Effect.gen(function*() {
        const a = yield* withVat("Alpha")
        const b = yield* makeFixture("Beta")
        expect(invalidFields(yield* as(b.tokens.api, "PATCH", "/v1/organization", { vat_number: "RO14399841" }))).toEqual(["vat_number"])
        expect(invalidFields(yield* as(b.tokens.api, "PATCH", "/v1/organization", { vat_number: "x".repeat(41) }))).toEqual(["vat_number"])
        const taken = yield* as(b.tokens.api, "PATCH", "/v1/organization", { vat_number: a.vat })
        expect([taken.status, taken.json.error.code]).toEqual([409, "conflict"])
        const sandbox = yield* as(b.tokens.sandbox, "PATCH", "/v1/organization", { vat_number: uniqueCui() })
        expect([sandbox.status, sandbox.json.error.code]).toEqual([400, "live_credential_required"])
        expect((yield* as(a.tokens.api, "PATCH", "/v1/organization", { vat_number: null })).json.data.vat_number).toBeNull()
        expect((yield* as(b.tokens.api, "PATCH", "/v1/organization", { vat_number: `ro${a.vat}` })).json.data.vat_number).toBe(a.vat)
        expect((yield* as(b.tokens.api, "GET", "/v1/organization")).json.data).toMatchObject({ vat_number: a.vat, name: "Beta" })
      }))

    it.effect("a cabinet asks, the client sees it and approves, either side revokes; each side sees its own role", () =>
      Effect.gen(function*() {
        const cabinet = yield* withVat("Cabinet Contabil SRL")
        const client = yield* withVat("Client SRL")
        const asked = yield* ask(cabinet, `RO${client.vat}`, "cabinet", "bookkeeping")
        expect(asked.status).toBe(201)
        const id = asked.json.data.id
        // The side that asked sees the number it asked for, and no one yet.
        expect(asked.json.data).toEqual({
          id,
          role: "cabinet",
          status: "pending",
          scope: "bookkeeping",
          counterparty_org_id: null,
          counterparty_name: null,
          counterparty_vat_number: client.vat,
          requested_at: expect.any(String),
          approved_at: null,
          revoked_at: null
        })
        // The client sees who asks.
        const seen = yield* as(client.tokens.api, "GET", "/v1/cabinet/access-grants")
        expect(seen.json.data).toEqual([{
          ...asked.json.data,
          role: "client",
          counterparty_org_id: cabinet.organizationId,
          counterparty_name: "Cabinet Contabil SRL",
          counterparty_vat_number: cabinet.vat
        }])
        expect(seen.json.meta).toMatchObject({ total: 1, page: 1 })
        // Only the side that was asked approves.
        const self = yield* as(cabinet.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/approve`)
        expect([self.status, self.json.error.code]).toEqual([409, "conflict"])
        expect(self.json.error.message).toMatch(/asked for by your organization; the client approves it/)
        const approved = yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/approve`)
        expect(approved.json.data).toMatchObject({ role: "client", status: "active", approved_at: expect.any(String), revoked_at: null })
        // Approved, the cabinet learns whom it reached.
        const mine = yield* as(cabinet.tokens.api, "GET", `/v1/cabinet/access-grants/${id}`)
        expect(mine.json.data).toMatchObject({
          role: "cabinet",
          status: "active",
          counterparty_org_id: client.organizationId,
          counterparty_name: "Client SRL",
          counterparty_vat_number: client.vat
        })
        const again = yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/approve`)
        expect([again.status, again.json.error.code]).toEqual([409, "invalid_transition"])
        // A second open grant between the two, whichever side asks, is refused.
        for (const second of [yield* ask(cabinet, client.vat, "cabinet"), yield* ask(client, cabinet.vat, "client"), yield* ask(client, cabinet.vat, "cabinet")]) {
          expect([second.status, second.json.error.code]).toEqual([409, "conflict"])
        }
        const revoked = yield* as(cabinet.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/revoke`)
        expect(revoked.json.data).toMatchObject({ role: "cabinet", status: "revoked", revoked_at: expect.any(String), counterparty_name: "Client SRL" })
        const twice = yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/revoke`)
        expect([twice.status, twice.json.error.code]).toEqual([409, "invalid_transition"])
        // Revoked, the two may start again: this time the client invites its accountant.
        const invited = yield* ask(client, cabinet.vat, "client")
        expect(invited.json.data).toMatchObject({ role: "client", status: "pending", scope: "read", counterparty_org_id: null })
        const accepted = yield* as(cabinet.tokens.api, "POST", `/v1/cabinet/access-grants/${invited.json.data.id}/approve`)
        expect(accepted.json.data).toMatchObject({ role: "cabinet", status: "active", counterparty_org_id: client.organizationId })
        expect((yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${invited.json.data.id}/revoke`)).json.data.status)
          .toBe("revoked")

        const list = (token: string, query: string) =>
          Effect.map(as(token, "GET", `/v1/cabinet/access-grants${query}`), (r) => r.json.data.map((g: any) => g.id))
        expect(yield* list(client.tokens.api, "")).toEqual([invited.json.data.id, id])
        expect(yield* list(client.tokens.api, "?role=client")).toEqual([invited.json.data.id, id])
        expect(yield* list(cabinet.tokens.api, "?role=client")).toEqual([])
        expect(yield* list(cabinet.tokens.api, "?role=cabinet&status=revoked&perPage=1")).toEqual([invited.json.data.id])
        expect(yield* list(cabinet.tokens.sandbox, "")).toEqual([])
        expect(invalidFields(yield* as(cabinet.tokens.api, "GET", "/v1/cabinet/access-grants?role=accountant&status=gone")))
          .toEqual(["role", "status"])
      }))

    it.effect("a pending request is declined by the side asked, or withdrawn by the side that asked", () =>
      Effect.gen(function*() {
        const cabinet = yield* withVat("Declined cabinet")
        const client = yield* withVat("Declining client")
        const first = (yield* ask(cabinet, client.vat, "cabinet")).json.data.id
        const declined = yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${first}/revoke`)
        expect(declined.json.data).toMatchObject({ status: "revoked", approved_at: null })
        // A declined request never told the cabinet who holds the number.
        const afterDecline = yield* as(cabinet.tokens.api, "GET", `/v1/cabinet/access-grants/${first}`)
        expect(afterDecline.json.data).toMatchObject({ status: "revoked", counterparty_org_id: null, counterparty_name: null })
        const second = (yield* ask(cabinet, client.vat, "cabinet")).json.data.id
        expect((yield* as(cabinet.tokens.api, "POST", `/v1/cabinet/access-grants/${second}/revoke`)).json.data.status).toBe("revoked")
        const approveWithdrawn = yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${second}/approve`)
        expect([approveWithdrawn.status, approveWithdrawn.json.error.code]).toEqual([409, "invalid_transition"])
        expect(yield* auditActions(client.tokens.api)).toEqual([
          "grant.request:success",
          "grant.decline:success",
          "grant.request:success",
          "grant.withdraw:success"
        ])
        // A third organization sees none of it.
        const stranger = yield* makeFixture()
        expect((yield* as(stranger.tokens.api, "GET", `/v1/cabinet/access-grants/${first}`)).status).toBe(404)
        expect((yield* as(stranger.tokens.api, "POST", `/v1/cabinet/access-grants/${first}/revoke`)).status).toBe(404)
      }))

    it.effect("a VAT number no organization holds answers exactly like one that is held", () =>
      Effect.gen(function*() {
        const known = yield* withVat("Known client")
        const steps = (asker: Fixture, vat: string) =>
          Effect.gen(function*() {
            const created = yield* ask(asker, vat, "cabinet")
            const id = created.json.data.id
            return [
              shape(created),
              shape(yield* as(asker.tokens.api, "GET", `/v1/cabinet/access-grants/${id}`)),
              shape(yield* as(asker.tokens.api, "GET", "/v1/cabinet/access-grants?perPage=1")),
              shape(yield* ask(asker, vat, "cabinet")),
              shape(yield* ask(asker, vat, "client")),
              shape(yield* as(asker.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/approve`)),
              shape(yield* as(asker.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/revoke`))
            ]
          })
        const heldAnswers = yield* steps(yield* withVat("Probing cabinet"), known.vat)
        const unheldAnswers = yield* steps(yield* withVat("Probing cabinet"), uniqueCui())
        expect(unheldAnswers).toEqual(heldAnswers)
        expect(heldAnswers.map((a) => a.status)).toEqual([201, 200, 200, 409, 409, 409, 200])
        // Asking for oneself is refused, and a number that is no CUI is refused before anything is looked up.
        const asker = yield* withVat("Asker")
        expect(invalidFields(yield* ask(asker, asker.vat, "cabinet"))).toEqual(["counterparty_vat_number"])
        expect(invalidFields(yield* ask(asker, "RO14399841", "client"))).toEqual(["counterparty_vat_number"])
        expect(invalidFields(yield* as(asker.tokens.api, "POST", "/v1/cabinet/access-grants", { counterparty_vat_number: known.vat, role: "auditor", scope: "all" })))
          .toEqual(["role", "scope"])
      }))

    it.effect("the header without an active grant in the credential's environment answers as an unknown organization", () =>
      Effect.gen(function*() {
        const cabinet = yield* withVat("Header cabinet")
        const client = yield* withVat("Header client")
        const unknownOrganization = "00000000-0000-4000-8000-00000000dead"
        const refusal = (token: string, organization: string) => as(token, "GET", "/v1/invoices", undefined, organization)
        const expectUnknown = (r: RawResponse, organization: string) => {
          expect(r.status).toBe(404)
          expect(r.json).toEqual({
            data: null,
            error: { code: "not_found", message: `No organization with id '${organization}'`, requestId: r.headers["x-request-id"] }
          })
          expect(r.headers["www-authenticate"]).toBeUndefined()
        }
        expectUnknown(yield* refusal(cabinet.tokens.api, unknownOrganization), unknownOrganization)
        expectUnknown(yield* refusal(cabinet.tokens.api, client.organizationId), client.organizationId)
        const id = (yield* ask(cabinet, client.vat, "cabinet")).json.data.id
        expectUnknown(yield* refusal(cabinet.tokens.api, client.organizationId), client.organizationId)
        yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/approve`)
        expect((yield* refusal(cabinet.tokens.api, client.organizationId)).status).toBe(200)
        // The grant is the live environment's: a sandbox key of the cabinet reaches nothing with it.
        expectUnknown(yield* refusal(cabinet.tokens.sandbox, client.organizationId), client.organizationId)
        // The grant runs one way: the client does not reach the cabinet's books.
        expectUnknown(yield* refusal(client.tokens.api, cabinet.organizationId), cabinet.organizationId)
        yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/revoke`)
        expectUnknown(yield* refusal(cabinet.tokens.api, client.organizationId), client.organizationId)
        // Naming one's own organization is the same as not sending the header; a value that is no id is a 400.
        expect((yield* refusal(cabinet.tokens.api, cabinet.organizationId)).status).toBe(200)
        expect(invalidFields(yield* refusal(cabinet.tokens.api, "cabinet"))).toEqual(["Opsplatform-Organization"])
        // The refusals where a grant existed are in the client's log; none where there was no grant.
        expect(yield* auditActions(client.tokens.api)).toEqual([
          "grant.request:success",
          "request.on_behalf:denied",
          "grant.approve:success",
          "request.on_behalf:success",
          "grant.revoke:success",
          "request.on_behalf:denied"
        ])
      }))

    it.effect("acting for a client runs in the client's books with the scopes the credential holds and the grant allows", () =>
      Effect.gen(function*() {
        const cabinet = yield* withVat("Books cabinet")
        const client = yield* withVat("Books client")
        const contact = yield* as(client.tokens.api, "POST", "/v1/contacts", { name: "Customer SRL", kind: "customer" })
        const invoice = yield* as(client.tokens.api, "POST", "/v1/invoices", { contact_id: contact.json.data.id, currency: "RON" })
        const id = yield* activeGrant(cabinet, client, "read")
        const read = yield* as(cabinet.tokens.api, "GET", "/v1/invoices", undefined, client.organizationId)
        expect(read.json.data.map((i: any) => i.id)).toEqual([invoice.json.data.id])
        expect((yield* as(cabinet.tokens.api, "GET", "/v1/invoices")).json.data).toEqual([])
        // A read grant lets no write through, and nothing outside the books.
        for (const [method, path, body, scope] of [
          ["POST", "/v1/invoices", { contact_id: contact.json.data.id, currency: "RON" }, "invoices:write"],
          ["GET", "/v1/cabinet/access-grants", undefined, "grants:read"],
          ["PATCH", "/v1/organization", { name: "Taken over" }, "organization:write"],
          ["GET", "/v1/audit-events", undefined, "audit:read"],
          ["GET", "/v1/webhooks", undefined, "webhooks:read"]
        ] as const) {
          const refused = yield* as(cabinet.tokens.api, method, path, body, client.organizationId)
          expect([refused.status, refused.json.error.code, refused.json.error.message], path).toEqual([
            403,
            "insufficient_scope",
            `This credential lacks the scope '${scope}'`
          ])
        }
        // A credential narrower than the grant stays as narrow.
        const narrow = yield* Effect.flatMap(Credentials.Credentials, (c) =>
          c.issue(cabinet.live, { kind: "api_key", scopes: ["expenses:read", "grants:read"] }))
        expect((yield* as(narrow.token, "GET", "/v1/expenses", undefined, client.organizationId)).status).toBe(200)
        expect((yield* as(narrow.token, "GET", "/v1/invoices", undefined, client.organizationId)).status).toBe(403)
        yield* as(client.tokens.api, "POST", `/v1/cabinet/access-grants/${id}/revoke`)

        // A bookkeeping grant lets the cabinet write the client's invoices, which stay the client's.
        yield* activeGrant(cabinet, client, "bookkeeping")
        const written = yield* as(cabinet.tokens.api, "POST", "/v1/invoices", { contact_id: contact.json.data.id, currency: "EUR" }, client.organizationId)
        expect(written.status).toBe(201)
        expect((yield* as(client.tokens.api, "GET", `/v1/invoices/${written.json.data.id}`)).status).toBe(200)
        expect((yield* as(cabinet.tokens.api, "GET", `/v1/invoices/${written.json.data.id}`)).status).toBe(404)
        // The client's id of something the client does not have is an ordinary 404, recorded as a failed request.
        const missing = yield* as(cabinet.tokens.api, "GET", "/v1/invoices/00000000-0000-4000-8000-00000000beef", undefined, client.organizationId)
        expect(missing.status).toBe(404)
        const log = (yield* as(client.tokens.api, "GET", "/v1/audit-events?action=request.on_behalf&perPage=3")).json.data
        expect(log.map((e: any) => [e.outcome, e.details])).toEqual([
          ["failure", { method: "GET", path: "/v1/invoices/00000000-0000-4000-8000-00000000beef", status: 404 }],
          ["success", { method: "POST", path: "/v1/invoices", status: 201 }],
          ["denied", { method: "GET", path: "/v1/invoices", status: 403 }]
        ])
        expect(log[1]).toMatchObject({
          actor_organization_id: cabinet.organizationId,
          resource_type: "access_grant",
          request_id: written.headers["x-request-id"]
        })
        // The cabinet's own log holds the grant's steps, not the requests it made in the client's books.
        expect((yield* auditActions(cabinet.tokens.api)).filter((a) => a.startsWith("request."))).toEqual([])
      }))

    it.effect("with a read grant, every endpoint outside the read scopes answers 403 and every one inside passes the scope check", () =>
      Effect.gen(function*() {
        const cabinet = yield* withVat("Sweep cabinet")
        const client = yield* withVat("Sweep client")
        yield* activeGrant(cabinet, client, "read")
        const allowed = new Set<string>(GrantRules.grantScopeSets.read)
        const endpoints = Object.values(Api.groups).flatMap((group: any) => Object.values(group.endpoints)) as Array<any>
        for (const endpoint of endpoints) {
          const required = Context.getOrUndefined(endpoint.annotations, RequiredScope) as Scopes.Scope
          const path = String(endpoint.path).replace(/:(\w+)/g, "00000000-0000-4000-8000-0000000000aa")
          const res = yield* as(cabinet.tokens.api, endpoint.method, path, endpoint.method === "GET" ? undefined : {}, client.organizationId)
          if (allowed.has(required)) expect(res.status, `${endpoint.method} ${endpoint.path}`).not.toBe(403)
          else expect([res.status, res.json.error.code], `${endpoint.method} ${endpoint.path}`).toEqual([403, "insufficient_scope"])
        }
      }))
  })
})
