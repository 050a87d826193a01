import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeFixture } from "@opsplatform/testing"
import { ApiTestLayer, call, client, expectNotFound, invalidFields, outsiders } from "../support/api.ts"

const imap = { host: "imap.firm.example", username: "office@firm.example", password: "imap-secret-1" }

describe("/v1/mailboxes handlers over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("creates, reads, lists, updates and deletes a mailbox, never showing its password", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const created = yield* call("POST", "/v1/mailboxes", {
          token: f.tokens.api,
          body: { address: "office@firm.example", aliases: ["sales@firm.example"], imap }
        })
        expect(created.status).toBe(201)
        expect(created.json.data).toMatchObject({
          address: "office@firm.example",
          aliases: ["sales@firm.example"],
          owner: { type: "organization" },
          imap: { host: "imap.firm.example", port: 993, tls: "implicit", username: "office@firm.example", auth: "password" },
          enabled: true,
          last_synced_at: null,
          last_error: null
        })
        const id = created.json.data.id
        const got = yield* call("GET", `/v1/mailboxes/${id}`, { token: f.tokens.api })
        const listed = yield* call("GET", "/v1/mailboxes?enabled=true", { token: f.tokens.api })
        expect(listed.json.data.map((m: { id: string }) => m.id)).toEqual([id])
        for (const r of [created, got, listed]) expect(JSON.stringify(r.json)).not.toContain("imap-secret-1")

        const updated = yield* api.mail.update({
          params: { id },
          payload: { aliases: [], enabled: false, imap: { tls: "starttls", port: 143, access_token: "ya29.token" } }
        })
        expect(updated.data).toMatchObject({ aliases: [], enabled: false, imap: { tls: "starttls", port: 143, auth: "access_token" } })
        expect((yield* call("GET", "/v1/mailboxes?enabled=true", { token: f.tokens.api })).json.data).toEqual([])
        expect(yield* api.mail.remove({ params: { id } })).toEqual({ data: { id, deleted: true }, error: null })
        expectNotFound(yield* Effect.flip(api.mail.get({ params: { id } })))
      }))

    it.effect("keeps mailboxes to their organization and environment", () =>
      Effect.gen(function*() {
        const owner = yield* makeFixture()
        const created = yield* call("POST", "/v1/mailboxes", { token: owner.tokens.api, body: { address: "own@firm.example", imap } })
        const id = created.json.data.id
        for (const api of yield* outsiders(owner)) {
          expectNotFound(yield* Effect.flip(api.mail.get({ params: { id } })))
          expectNotFound(yield* Effect.flip(api.mail.update({ params: { id }, payload: { enabled: false } })))
          expectNotFound(yield* Effect.flip(api.mail.remove({ params: { id } })))
        }
      }))

    it.effect("refuses bad input with every failing field, and a second mailbox with the same address", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const token = f.tokens.api
        const post = (body: unknown) => call("POST", "/v1/mailboxes", { token, body })
        expect(invalidFields(yield* post({
          address: "not an address",
          aliases: ["ok@firm.example", "OK@firm.example"],
          imap: { host: "https://imap.firm.example", port: 70_000, tls: "ssl", username: " ", password: "" }
        }))).toEqual(["address", "aliases", "imap.host", "imap.password", "imap.port", "imap.tls", "imap.username"])
        expect(invalidFields(yield* post({ address: "a@firm.example", imap: { host: "imap.firm.example", username: "a" } })))
          .toEqual(["imap.password"])
        const both = yield* post({ address: "a@firm.example", imap: { ...imap, access_token: "t" } })
        expect(invalidFields(both)).toEqual(["imap.access_token"])
        // Plain text only in the sandbox; no loopback or private host unless the operator allows it.
        const unsafe = yield* post({
          address: "a@firm.example",
          aliases: ["A@firm.example"],
          owner: { type: "member", user_id: "00000000-0000-4000-8000-0000000000aa" },
          imap: { ...imap, host: "127.0.0.1", tls: "none" }
        })
        expect(unsafe.json.error.details).toEqual([
          { field: "imap.tls", issue: "must be implicit or starttls in the live environment" },
          { field: "imap.host", issue: "must not be a loopback, private, link-local or multicast address" },
          { field: "aliases[0]", issue: "is the mailbox's own address" },
          { field: "owner.user_id", issue: "is not a member of this organization" }
        ])
        expect(invalidFields(yield* post({ address: "a@firm.example", imap: { ...imap, host: "mail.localhost" } }))).toEqual([
          "imap.host"
        ])
        const sandbox = yield* call("POST", "/v1/mailboxes", {
          token: f.tokens.sandbox,
          body: { address: "a@firm.example", imap: { ...imap, tls: "none" } }
        })
        expect(sandbox.json.data.imap).toMatchObject({ tls: "none", port: 143 })
        expect((yield* post({ address: "dup@firm.example", imap })).status).toBe(201)
        const dup = yield* post({ address: "DUP@firm.example", imap })
        expect(dup.status).toBe(409)
        expect(dup.json.error).toMatchObject({ code: "conflict", message: "Another mailbox of this environment already has this address" })
        const member = yield* post({ address: "mine@firm.example", owner: { type: "member", user_id: f.userId }, imap })
        expect(member.json.data.owner).toEqual({ type: "member", user_id: f.userId })
      }))

    it.effect("asks for mail:read to read and mail:write to change", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const read = yield* call("GET", "/v1/mailboxes", { token: f.tokens.narrow })
        expect(read.status).toBe(403)
        expect(read.json.error.message).toContain("mail:read")
        const write = yield* call("POST", "/v1/mailboxes", { token: f.tokens.narrow, body: { address: "x@firm.example", imap } })
        expect(write.json.error.message).toContain("mail:write")
      }))
  })
})
