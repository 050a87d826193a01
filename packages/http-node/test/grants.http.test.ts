import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Fixture, uniqueCui } from "@opsplatform/testing"
import { assertBuilt, freePort, runCommand, type Serving, startServe } from "./support/cli.ts"
import { postgresUrl, testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

const ACT_FOR = "opsplatform-organization"

/** An organization of the server's with its VAT number set through the API. */
const organization = async (server: TestServer, name: string) => {
  const f = await seedFixture(server, name)
  const vat = uniqueCui()
  const set = await call(server, "PATCH", "/v1/organization", { token: f.tokens.api, body: { vat_number: `RO${vat}` } })
  expect(set.json.data.vat_number).toBe(vat)
  return { ...f, vat }
}

/** The client's audit log, oldest first, as `action:outcome` with the acting organization. */
const auditTrail = async (server: TestServer, client: Fixture) => {
  const res = await call(server, "GET", "/v1/audit-events?perPage=100", { token: client.tokens.api })
  expect(res.status).toBe(200)
  return (res.json.data as Array<any>).reverse()
}

for (const db of testDatabases()) {
  describe(`accountant access grants over HTTP (${db.name})`, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await startTestServer(db.choice())
    })
    afterAll(() => server.close())

    it("a cabinet asks by VAT number, the client approves, the cabinet reads the client's invoices, the client revokes, the next request is refused — each step in the client's log", async () => {
      const cabinet = await organization(server, "Contabil Expert SRL")
      const client = await organization(server, "Brutăria Dobrogeană SRL")
      const contact = await call(server, "POST", "/v1/contacts", { token: client.tokens.api, body: { name: "Hotel Mamaia", kind: "customer" } })
      const invoice = await call(server, "POST", "/v1/invoices", {
        token: client.tokens.api,
        body: { contact_id: contact.json.data.id, currency: "RON", lines: [{ description: "Bread", quantity: "100", unit_price: "2.5", vat_rate: 11 }] }
      })
      expect(invoice.status).toBe(201)

      // 1. The cabinet asks its client for read access, naming it by its VAT number.
      const asked = await call(server, "POST", "/v1/cabinet/access-grants", {
        token: cabinet.tokens.api,
        body: { counterparty_vat_number: `RO ${client.vat}`, role: "cabinet", scope: "read" }
      })
      expect(asked.status).toBe(201)
      expect(asked.json.data).toMatchObject({ role: "cabinet", status: "pending", counterparty_org_id: null, counterparty_vat_number: client.vat })
      const grantId = asked.json.data.id

      // 2. The client finds the request in its list and approves it.
      const pending = await call(server, "GET", "/v1/cabinet/access-grants?role=client&status=pending", { token: client.tokens.api })
      expect(pending.json.data).toEqual([expect.objectContaining({
        id: grantId,
        role: "client",
        counterparty_org_id: cabinet.organizationId,
        counterparty_name: "Contabil Expert SRL",
        counterparty_vat_number: cabinet.vat
      })])
      const approved = await call(server, "POST", `/v1/cabinet/access-grants/${grantId}/approve`, { token: client.tokens.api })
      expect(approved.json.data).toMatchObject({ status: "active", approved_at: expect.any(String) })

      // 3. The cabinet lists the client's invoices by naming the client.
      const books = await call(server, "GET", "/v1/invoices", { token: cabinet.tokens.api, headers: { [ACT_FOR]: client.organizationId } })
      expect(books.status).toBe(200)
      expect(books.json.data.map((i: any) => [i.id, i.total])).toEqual([[invoice.json.data.id, "277.50"]])
      const readRequestId = books.headers.get("x-request-id")

      // 4. The client revokes; 5. the cabinet's next request is refused as for an unknown organization.
      const revoked = await call(server, "POST", `/v1/cabinet/access-grants/${grantId}/revoke`, { token: client.tokens.api })
      expect(revoked.json.data).toMatchObject({ status: "revoked", revoked_at: expect.any(String) })
      const refused = await call(server, "GET", "/v1/invoices", { token: cabinet.tokens.api, headers: { [ACT_FOR]: client.organizationId } })
      expect(refused.status).toBe(404)
      expect(refused.json.error).toMatchObject({ code: "not_found", message: `No organization with id '${client.organizationId}'` })

      // Each step, in the client's audit log, with the cabinet as the actor.
      const trail = await auditTrail(server, client)
      expect(trail.map((e) => [e.action, e.outcome, e.actor_organization_id, e.resource_id])).toEqual([
        ["grant.request", "success", cabinet.organizationId, grantId],
        ["grant.approve", "success", client.organizationId, grantId],
        ["request.on_behalf", "success", cabinet.organizationId, grantId],
        ["grant.revoke", "success", client.organizationId, grantId],
        ["request.on_behalf", "denied", cabinet.organizationId, grantId]
      ])
      expect(trail[2]).toMatchObject({
        request_id: readRequestId,
        resource_type: "access_grant",
        details: { method: "GET", path: "/v1/invoices", status: 200 }
      })
      expect(trail[4].details).toEqual({ method: "GET", path: "/v1/invoices", status: 404, grant_status: "revoked" })
      expect(trail[4].request_id).toBe(refused.headers.get("x-request-id"))
      // The cabinet's own log has the grant's steps, and nothing of what it read in the client's books.
      expect((await auditTrail(server, cabinet)).map((e) => e.action)).toEqual(["grant.request", "grant.approve", "grant.revoke"])
    })

    it("a request for a client that cannot be written to the client's log is not served; a grant's step whose entry fails is rolled back", async () => {
      const cabinet = await organization(server, "Cabinet unlogged")
      const client = await organization(server, "Client unlogged")
      const asked = await call(server, "POST", "/v1/cabinet/access-grants", {
        token: client.tokens.api,
        body: { counterparty_vat_number: cabinet.vat, role: "client" }
      })
      await call(server, "POST", `/v1/cabinet/access-grants/${asked.json.data.id}/approve`, { token: cabinet.tokens.api })
      await call(server, "POST", "/v1/contacts", { token: client.tokens.api, body: { name: "Secret customer", kind: "customer" } })
      const read = () => call(server, "GET", "/v1/contacts", { token: cabinet.tokens.api, headers: { [ACT_FOR]: client.organizationId } })
      expect((await read()).status).toBe(200)
      // The client's log refuses these entries (as a full disk or a lost connection would), and only the client's.
      const name = `refuse_audit_${client.organizationId.replaceAll("-", "")}`
      const sql = (statement: string) => server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)))
      await sql(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit log unavailable'; END $$`)
      await sql(`CREATE TRIGGER ${name} BEFORE INSERT ON audit_events FOR EACH ROW
        WHEN (NEW.organization_id = '${client.organizationId}' AND NEW.action IN ('request.on_behalf', 'grant.revoke')) EXECUTE FUNCTION ${name}()`)
      try {
        const refused = await read()
        expect(refused.status).toBe(500)
        expect(refused.text).not.toContain("Secret customer")
        expect((await call(server, "GET", "/v1/contacts", { token: client.tokens.api })).status).toBe(200)
        // A revocation whose audit entry fails is rolled back whole: the grant stays active on both sides' logs alike.
        const revoke = await call(server, "POST", `/v1/cabinet/access-grants/${asked.json.data.id}/revoke`, { token: cabinet.tokens.api })
        expect(revoke.status).toBe(500)
        const grant = await call(server, "GET", `/v1/cabinet/access-grants/${asked.json.data.id}`, { token: cabinet.tokens.api })
        expect(grant.json.data).toMatchObject({ status: "active", revoked_at: null })
        expect((await auditTrail(server, cabinet)).map((e) => e.action)).toEqual(["grant.request", "grant.approve"])
      } finally {
        await sql(`DROP TRIGGER ${name} ON audit_events`)
        await sql(`DROP FUNCTION ${name}()`)
      }
      expect((await read()).status).toBe(200)
    })

    it("a bookkeeping grant writes the client's books, invited by the client; two requests at once make one grant", async () => {
      const cabinet = await organization(server, "Cabinet Bookkeeping")
      const client = await organization(server, "Client Bookkeeping")
      const invite = () =>
        call(server, "POST", "/v1/cabinet/access-grants", {
          token: client.tokens.api,
          body: { counterparty_vat_number: cabinet.vat, role: "client", scope: "bookkeeping" }
        })
      const answers = await Promise.all([invite(), invite(), invite()])
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409])
      const grantId = answers.find((a) => a.status === 201)!.json.data.id
      await call(server, "POST", `/v1/cabinet/access-grants/${grantId}/approve`, { token: cabinet.tokens.api })
      const expense = await call(server, "POST", "/v1/expenses", {
        token: cabinet.tokens.api,
        headers: { [ACT_FOR]: client.organizationId },
        body: { description: "Flour", category: "other", amount: "120.00", currency: "RON", expense_date: "2026-03-02" }
      })
      expect(expense.status).toBe(201)
      const clientExpenses = await call(server, "GET", "/v1/expenses", { token: client.tokens.api })
      expect(clientExpenses.json.data.map((e: any) => e.id)).toEqual([expense.json.data.id])
      const webhooks = await call(server, "POST", "/v1/webhooks", {
        token: cabinet.tokens.api,
        headers: { [ACT_FOR]: client.organizationId },
        body: { url: "https://cabinet.example/hooks", event_types: ["invoice.paid"] }
      })
      expect([webhooks.status, webhooks.json.error.code]).toEqual([403, "insufficient_scope"])
    })
  })
}

describe.runIf(postgresUrl() !== undefined)("a revocation holds from the next request in every process on one PostgreSQL", () => {
  let server: TestServer
  let other: Serving
  beforeAll(async () => {
    assertBuilt()
    server = await startTestServer({ _tag: "Postgres", url: postgresUrl()!, maxConnections: 2 })
    other = await startServe(await freePort(), { DATABASE_URL: postgresUrl() })
  }, 120_000)
  afterAll(async () => {
    await server.close()
    other.child.kill("SIGTERM")
    await other.exited
  })

  const onOther = async (token: string, path: string, client: string) => {
    const response = await fetch(`${other.url}${path}`, { headers: { authorization: `Bearer ${token}`, [ACT_FOR]: client } })
    return { status: response.status, json: await response.json() as any }
  }

  it("the cabinet reads through the other server until the client revokes through this one, then not once more", async () => {
    const cabinet = await organization(server, "Cabinet two servers")
    const client = await seedFixture(server, "Client two servers")
    // The operator sets the client's number from the command line.
    const vat = uniqueCui()
    const set = await runCommand(["admin", "set-org", "--org", client.organizationId, "--vat-number", `RO ${vat}`], {
      DATABASE_URL: postgresUrl()
    })
    expect(JSON.parse(set.stdout)).toMatchObject({ id: client.organizationId, vat_number: vat })
    const asked = await call(server, "POST", "/v1/cabinet/access-grants", {
      token: cabinet.tokens.api,
      body: { counterparty_vat_number: vat, role: "cabinet" }
    })
    const grantId = asked.json.data.id
    expect((await onOther(cabinet.tokens.api, "/v1/contacts", client.organizationId)).status).toBe(404)
    await call(server, "POST", `/v1/cabinet/access-grants/${grantId}/approve`, { token: client.tokens.api })
    for (let i = 0; i < 3; i++) expect((await onOther(cabinet.tokens.api, "/v1/contacts", client.organizationId)).status).toBe(200)
    const revoked = await call(server, "POST", `/v1/cabinet/access-grants/${grantId}/revoke`, { token: client.tokens.api })
    expect(revoked.status).toBe(200)
    const next = await onOther(cabinet.tokens.api, "/v1/contacts", client.organizationId)
    expect(next.status).toBe(404)
    expect(next.json.error.message).toBe(`No organization with id '${client.organizationId}'`)
    // Both servers wrote to the one log of the client.
    const trail = await auditTrail(server, client)
    expect(trail.map((e) => `${e.action}:${e.outcome}`)).toEqual([
      "grant.request:success",
      "request.on_behalf:denied",
      "grant.approve:success",
      "request.on_behalf:success",
      "request.on_behalf:success",
      "request.on_behalf:success",
      "grant.revoke:success",
      "request.on_behalf:denied"
    ])
  }, 60_000)
})
