import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as Events from "../../src/events/catalog.ts"

const uuid = "0190f5c2-7a1b-7c3d-8e4f-0123456789ab"

describe("event ids", () => {
  it("follow the specification's formats", () => {
    expect(Events.paymentEventId(uuid)).toBe(`evt_pay_${uuid}`)
    expect(Events.reversalEventId(uuid)).toBe(`evt_rev_${uuid}`)
    expect(Events.creditedEventId(uuid, 12050)).toBe(`evt_cred_${uuid}_12050`)
    expect(Events.fiscalStatusEventId(uuid, "became_inactive", "2026-03-01")).toBe(
      `evt_fsc_${uuid}_became_inactive_2026-03-01`
    )
    expect(Events.courtHearingEventId(uuid)).toBe(`evt_court_hearing_${uuid}`)
  })

  it("derive email.received ids as evt_ and 32 hex digits of the stored message id", () => {
    const id = Events.emailReceivedEventId(uuid.toUpperCase())
    expect(id).toMatch(/^evt_[0-9a-f]{32}$/)
    expect(id).toBe("evt_0190f5c27a1b7c3d8e4f0123456789ab")
    expect(() => Events.emailReceivedEventId("not-a-uuid")).toThrow(TypeError)
  })

  it("give each dispatch of a route its own id, and the same dispatch the same id", () => {
    const first = Events.routeDispatchedEventId(uuid, 1)
    expect(first).toBe("evt_dsp_0190f5c27a1b7c3d8e4f0123456789ab_1")
    expect(Events.routeDispatchedEventId(uuid, 1)).toBe(first)
    expect(Events.routeDispatchedEventId(uuid, 2)).not.toBe(first)
    expect(() => Events.routeDispatchedEventId(uuid, 0)).toThrow(TypeError)
  })

  it("refuse a credited amount that is not a whole number of cents", () => {
    expect(() => Events.creditedEventId(uuid, 10.5)).toThrow(TypeError)
    expect(() => Events.creditedEventId(uuid, -1)).toThrow(TypeError)
  })
})

describe("event catalog", () => {
  it("lists every type of the specification, and the test ping apart", () => {
    expect([...Events.allEventTypes].sort()).toEqual([
      "contact.fiscal_status_changed",
      "court_case.hearing_added",
      "delivery_route.dispatched",
      "email.received",
      "fleet_vehicle.created",
      "fleet_vehicle.deleted",
      "fleet_vehicle.updated",
      "invoice.credited",
      "invoice.paid",
      "invoice.partially_paid",
      "invoice.payment_reversed",
      "webhook.test"
    ])
    expect(Events.subscribableEventTypes).not.toContain("webhook.test")
    expect(Events.subscribableEventTypes).toHaveLength(11)
    expect(Events.isEventType("invoice.paid")).toBe(true)
    expect(Events.isEventType("invoice.refunded")).toBe(false)
  })

  it("keeps the dispatch payload to identifiers", () => {
    const fields = Object.keys(Events.DeliveryRouteDispatchedData.fields).sort()
    expect(fields).toEqual(["dispatched_at", "driver_id", "id", "number", "stop_count", "vehicle_id"])
  })

  it("never carries message contents in email.received", () => {
    const fields = Object.keys(Events.EmailReceivedData.fields)
    for (const forbidden of ["body", "snippet", "cc", "bcc", "attachments"]) expect(fields).not.toContain(forbidden)
  })

  it("decodes the specification's partial-payment example and refuses an unknown payment source", () => {
    const data = {
      invoice_id: uuid,
      number: "INV-2026-0042",
      currency: "RON",
      total: "1190.00",
      credited_amount: "0.00",
      paid_amount: "500.00",
      remaining_amount: "690.00",
      status: "PARTIALLY_PAID",
      payment: {
        id: uuid,
        amount: "500.00",
        payment_date: "2026-03-02",
        method: "BANK_TRANSFER",
        reference: "OP 123",
        source: "bank_match"
      },
      paid_at: null,
      contact_id: uuid
    }
    expect(Schema.decodeUnknownSync(Events.InvoicePaymentData)(data)).toEqual(data)
    expect(() =>
      Schema.decodeUnknownSync(Events.InvoicePaymentData)({ ...data, payment: { ...data.payment, source: "refund" } })
    ).toThrow()
  })

  it("carries exactly the spec's two fields in contact.fiscal_status_changed, effective_date only when published", () => {
    expect(Object.keys(Events.ContactFiscalStatusChangedData.fields).sort()).toEqual(["changes", "open_invoices"])
    expect(Object.keys(Events.ContactFiscalStatusChangedData.fields.open_invoices.fields).sort()).toEqual(["balance_ron", "count"])
    const decode = Schema.decodeUnknownSync(Events.ContactFiscalStatusChangedData, { onExcessProperty: "error" })
    const data = {
      changes: [{ kind: "became_inactive", effective_date: "2026-05-10" }, { kind: "insolvency" }],
      open_invoices: { count: 2, balance_ron: "1747.63" }
    }
    expect(decode(data)).toEqual(data)
    expect(() => decode({ ...data, changes: [{ kind: "became_active" }] })).toThrow()
    expect(() => decode({ ...data, changes: [{ kind: "struck_off", effective_date: "2026-02-30" }] })).toThrow()
    expect(() => decode({ ...data, contact_id: uuid })).toThrow()
  })

  it("builds outbox events and adds the organization on delivery", () => {
    const e = Events.event("webhook.test", Events.freshEventId(uuid), { subscription_id: uuid })
    expect(e).toEqual({ eventId: "evt_0190f5c27a1b7c3d8e4f0123456789ab", type: "webhook.test", data: { subscription_id: uuid } })
    expect(Events.deliveredData(e.data, "org-1")).toEqual({ subscription_id: uuid, organizationId: "org-1" })
  })
})
