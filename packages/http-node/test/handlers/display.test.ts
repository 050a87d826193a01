import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeFixture } from "@opsplatform/testing"
import { ApiTestLayer, call, client, expectNotFound, invalidFields, outsiders } from "../support/api.ts"

describe("/v1/display handlers over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("registers a device with its token, sets its PIN, and the device unlocks with it", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const made = yield* api.display.create({ payload: { name: "Kitchen", locale: "en" } })
        expect(made.data.device).toMatchObject({ name: "Kitchen", locale: "en", pin_set: false })
        expect(made.data.token.startsWith("svc_dt_")).toBe(true)
        const id = made.data.device.id
        expect((yield* api.display.setPin({ params: { id }, payload: { pin: "9081" } })).data.pin_set).toBe(true)
        const device = yield* client(made.data.token)
        expect((yield* device.display.unlock({ payload: { pin: "9081" } })).data).toEqual({ ok: true, retryAfterSec: 0 })
        expect((yield* device.display.unlock({ payload: { pin: "9082" } })).data).toEqual({ ok: false, retryAfterSec: 0 })
        // Another organization and the other environment see no such device.
        for (const outsider of yield* outsiders(f)) expectNotFound(yield* Effect.flip(outsider.display.get({ params: { id } })))
        const listed = yield* api.display.list({ query: {} })
        expect(listed.data.map((d) => d.id)).toContain(id)
      }))

    it.effect("answers the display's refusals in the envelope with their statuses and codes", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const personal = yield* call("POST", "/v1/display/unlock", { token: f.tokens.personal, body: { pin: "1234" } })
        expect([personal.status, personal.json.error.code]).toEqual([400, "personal_token_not_allowed"])
        const noPin = yield* call("POST", "/v1/display/unlock", { token: f.tokens.device, body: { pin: "1234" } })
        expect([noPin.status, noPin.json.error.code]).toEqual([400, "pin_not_set"])
        expect(invalidFields(yield* call("POST", "/v1/display/unlock", { token: f.tokens.device, body: { pin: "12" } }))).toEqual(["pin"])
        const audio = yield* call("POST", "/v1/display/assistant", { token: f.tokens.device, body: { audio: "UklGRg==" } })
        expect([audio.status, audio.json.error.code]).toEqual([501, "STT_UNAVAILABLE"])
        expect(invalidFields(yield* call("POST", "/v1/display/assistant", { token: f.tokens.device, body: {} }))).toEqual(["text"])
        const asked = yield* call("POST", "/v1/display/assistant", { token: f.tokens.device, body: { text: "câte rute avem azi?" } })
        expect(asked.status).toBe(200)
        expect(asked.json.data).toMatchObject({ answer: "Azi sunt programate 0 rute.", kpi: { id: "routes_today", count: 0, unit: "count" } })
      }))
  })
})
