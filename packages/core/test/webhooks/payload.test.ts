import { describe, expect, it } from "vitest"
import { eventPayload, MAX_PAYLOAD_BYTES } from "../../src/events/Outbox.ts"

const tenant = { organizationId: "0190f5c2-7a1b-7c3d-8e4f-0123456789ab", environment: "sandbox" as const }

describe("the webhook body of an event", () => {
  it("is the envelope, created in Unix seconds, with the organization added to data", () => {
    const body = eventPayload(tenant, { eventId: "evt_1", type: "fleet_vehicle.created", data: { id: "v", plate: "B-1" } }, 1_767_225_600_999)
    expect(body).toBe(
      `{"id":"evt_1","type":"fleet_vehicle.created","created":1767225600,"environment":"sandbox",` +
        `"data":{"id":"v","plate":"B-1","organizationId":"${tenant.organizationId}"}}`
    )
  })

  it("is at most 256 KiB, counted in UTF-8 bytes: a larger one is the producer's bug and stops the publish", () => {
    const envelope = eventPayload(tenant, { eventId: "evt_2", type: "email.received", data: { subject: "" } }, 0)
    const room = MAX_PAYLOAD_BYTES - new TextEncoder().encode(envelope).length
    expect(() => eventPayload(tenant, { eventId: "evt_2", type: "email.received", data: { subject: "a".repeat(room) } }, 0))
      .not.toThrow()
    expect(() => eventPayload(tenant, { eventId: "evt_2", type: "email.received", data: { subject: "a".repeat(room + 1) } }, 0))
      .toThrow(RangeError)
    // Two bytes per "é": half as many characters fit.
    expect(() => eventPayload(tenant, { eventId: "evt_2", type: "email.received", data: { subject: "é".repeat(room / 2 + 1) } }, 0))
      .toThrow(/limited to 262144/)
  })
})
