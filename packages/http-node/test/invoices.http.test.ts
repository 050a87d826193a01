import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { receiverCertificateFile, type Receiver, startReceiver } from "./support/receiver.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"
import { subscribe, useTestWebhookSettings } from "./support/webhooks.ts"

useTestWebhookSettings({ stepMs: 300, timeoutMs: 1_500, caFile: receiverCertificateFile })

const invoiceEvents = ["invoice.paid", "invoice.partially_paid", "invoice.payment_reversed", "invoice.credited"]

for (const db of testDatabases()) {
  describe(`contacts and invoices over HTTP (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    let receiver: Receiver

    beforeAll(async () => {
      server = await startTestServer(db.choice(), { background: true })
      f = await seedFixture(server)
      receiver = await startReceiver({ tls: true })
    })
    afterAll(async () => {
      await server.close()
      await receiver.close()
    })

    const request = (method: string, path: string, body?: unknown, token = f.tokens.api) =>
      call(server, method, path, { token, ...(body === undefined ? {} : { body }) })

    it("contacts: a Romanian VAT number is checked, unique, and a contact with invoices stays", async () => {
      const bad = await request("POST", "/v1/contacts", { name: "Typo SRL", kind: "customer", vat_number: "RO14399841" })
      expect([bad.status, bad.json.error.code, bad.json.error.details[0].field]).toEqual([400, "validation_failed", "vat_number"])
      const created = await request("POST", "/v1/contacts", { name: "Dante SRL", kind: "customer", vat_number: "ro 14399840" })
      expect(created.status).toBe(201)
      expect(created.json.data).toMatchObject({ vat_number: "14399840", country: "RO", kind: "customer" })
      const twin = await request("POST", "/v1/contacts", { name: "Twin", kind: "both", vat_number: "14399840" })
      expect([twin.status, twin.json.error.code]).toEqual([409, "conflict"])
      const found = await request("GET", "/v1/contacts?vat_number=RO14399840")
      expect(found.json.data.map((c: any) => c.id)).toEqual([created.json.data.id])
      const invoice = await request("POST", "/v1/invoices", { contact_id: created.json.data.id, currency: "RON" })
      expect(invoice.status).toBe(201)
      const refused = await request("DELETE", `/v1/contacts/${created.json.data.id}`)
      expect([refused.status, refused.json.error.code]).toEqual([409, "conflict"])
      const foreign = await request("GET", `/v1/contacts/${created.json.data.id}`, undefined, f.tokens.sandbox)
      expect(foreign.status).toBe(404)
    })

    it("a newcomer's invoice: issue, part-pay, reverse, pay in full, credit — each event delivered exactly as the spec writes it", async () => {
      const sub = await subscribe(server, f.tokens.api, receiver.url, invoiceEvents)
      receiver.secrets = [sub.secret]
      const contact = (await request("POST", "/v1/contacts", { name: "Client SRL", kind: "customer" })).json.data
      const draft = await request("POST", "/v1/invoices", {
        contact_id: contact.id,
        currency: "RON",
        lines: [
          { description: "Consulting", quantity: "10", unit_price: "100", vat_rate: 21 },
          { description: "Travel", quantity: "1", unit_price: "40", vat_rate: 0 }
        ]
      })
      expect(draft.status).toBe(201)
      expect(draft.json.data).toMatchObject({ status: "DRAFT", number: null, subtotal: "1040.00", vat_total: "210.00", total: "1250.00" })
      const issued = await request("POST", `/v1/invoices/${draft.json.data.id}/issue`, { series: "FCT", issue_date: "2026-03-02" })
      expect(issued.json.data).toMatchObject({ status: "SENT", series: "FCT", due_date: "2026-03-02", remaining_amount: "1250.00" })
      const id = issued.json.data.id
      const number = issued.json.data.number
      expect(number).toMatch(/^FCT-\d{6}$/)

      const partial = await request("POST", `/v1/invoices/${id}/payments`, {
        amount: "250.00",
        payment_date: "2026-03-05",
        method: "BANK_TRANSFER",
        reference: "OP 1001"
      })
      expect(partial.status).toBe(201)
      const reversal = await request("POST", `/v1/invoices/${id}/payments/${partial.json.data.id}/reverse`, { reason: "returned" })
      expect(reversal.status).toBe(201)
      expect((await request("POST", `/v1/invoices/${id}/payments/${partial.json.data.id}/reverse`)).status).toBe(409)
      const full = await request("POST", `/v1/invoices/${id}/mark-paid`, { payment_date: "2026-03-09", method: "CARD" })
      expect(full.json.data).toMatchObject({ amount: "1250.00", source: "mark_paid" })
      const paidNow = await request("GET", `/v1/invoices/${id}`)
      expect(paidNow.json.data).toMatchObject({ status: "PAID", paid_amount: "1250.00", remaining_amount: "0.00" })
      const note = await request("POST", `/v1/invoices/${id}/credit-notes`, { reason: "Returned goods", amount: "1250.00" })
      expect(note.status).toBe(201)

      const eventIds = [
        `evt_pay_${partial.json.data.id}`,
        `evt_rev_${reversal.json.data.id}`,
        `evt_pay_${full.json.data.id}`,
        `evt_cred_${id}_125000`
      ]
      await receiver.until((all) => eventIds.every((e) => all.some((r) => r.headers["webhook-id"] === e)))
      expect(receiver.rejected).toEqual([])
      const body = (eventId: string) => JSON.parse(receiver.received.find((r) => r.headers["webhook-id"] === eventId)!.body)
      const balance = { invoice_id: id, number, currency: "RON", total: "1250.00", contact_id: contact.id, organizationId: f.organizationId }

      expect(body(eventIds[0]!)).toEqual({
        id: eventIds[0],
        type: "invoice.partially_paid",
        created: expect.any(Number),
        environment: "live",
        data: {
          ...balance,
          credited_amount: "0.00",
          paid_amount: "250.00",
          remaining_amount: "1000.00",
          status: "PARTIALLY_PAID",
          payment: {
            id: partial.json.data.id,
            amount: "250.00",
            payment_date: "2026-03-05",
            method: "BANK_TRANSFER",
            reference: "OP 1001",
            source: "api"
          },
          paid_at: null
        }
      })
      expect(body(eventIds[1]!).type).toBe("invoice.payment_reversed")
      expect(body(eventIds[1]!).data).toEqual({
        ...balance,
        credited_amount: "0.00",
        paid_amount: "0.00",
        remaining_amount: "1250.00",
        status: "SENT",
        reversal: {
          id: reversal.json.data.id,
          reverses_payment_id: partial.json.data.id,
          amount: "250.00",
          reversed_at: reversal.json.data.reversed_at
        }
      })
      expect(body(eventIds[2]!).type).toBe("invoice.paid")
      expect(body(eventIds[2]!).data).toEqual({
        ...balance,
        credited_amount: "0.00",
        paid_amount: "1250.00",
        remaining_amount: "0.00",
        status: "PAID",
        payment: {
          id: full.json.data.id,
          amount: "1250.00",
          payment_date: "2026-03-09",
          method: "CARD",
          reference: "",
          source: "mark_paid"
        },
        paid_at: paidNow.json.data.paid_at
      })
      expect(body(eventIds[3]!).type).toBe("invoice.credited")
      expect(body(eventIds[3]!).data).toEqual({
        ...balance,
        credited_amount: "1250.00",
        paid_amount: "1250.00",
        remaining_amount: "0.00",
        refund_due: "1250.00",
        status: "CREDITED",
        fully_credited: true,
        credit_note_id: note.json.data.id
      })
      // A credit note is not a payment: no other event went out, and none twice.
      const ours = receiver.received.filter((r) => JSON.parse(r.body).data.invoice_id === id)
      expect(ours.map((r) => r.headers["webhook-id"]).sort()).toEqual([...eventIds].sort())

      const refund = await request("POST", `/v1/invoices/${id}/refunds`, { amount: "1250", refund_date: "2026-03-10", method: "BANK_TRANSFER" })
      expect(refund.status).toBe(201)
      const after = await request("GET", `/v1/invoices/${id}`)
      expect(after.json.data).toMatchObject({ status: "CREDITED", paid_amount: "0.00", refund_due: "0.00" })
      expect((await request("GET", `/v1/invoices/${id}/refunds`)).json.data.map((r: any) => r.amount)).toEqual(["1250.00"])
    })

    it("bank lines are matched to invoices as bank_match payments; mistakes are clear 4xx answers", async () => {
      const contact = (await request("POST", "/v1/contacts", { name: "Bank client", kind: "customer" })).json.data
      const draft = (await request("POST", "/v1/invoices", {
        contact_id: contact.id,
        currency: "EUR",
        lines: [{ description: "Export", quantity: "2", unit_price: "50", vat_rate: 0 }]
      })).json.data
      const noRate = await request("POST", `/v1/invoices/${draft.id}/issue`, { series: "EXP" })
      expect([noRate.status, noRate.json.error.details[0].field]).toEqual([400, "exchange_rate_ron"])
      const issued = await request("POST", `/v1/invoices/${draft.id}/issue`, { series: "EXP", exchange_rate_ron: "4.9763" })
      expect(issued.json.data.exchange_rate_ron).toBe("4.9763")
      const lines = await request("POST", "/v1/bank-transactions", {
        lines: [
          { booking_date: "2026-03-05", amount: "40.00", currency: "EUR", reference: "INV EXP" },
          { booking_date: "2026-03-05", amount: "10.00", currency: "RON" }
        ]
      })
      expect(lines.status).toBe(201)
      const [eur, ron] = lines.json.data
      const mismatch = await request("POST", `/v1/bank-transactions/${ron.id}/match`, { invoice_id: draft.id })
      expect([mismatch.status, mismatch.json.error.code]).toEqual([422, "currency_mismatch"])
      const matched = await request("POST", `/v1/bank-transactions/${eur.id}/match`, { invoice_id: draft.id })
      expect(matched.status).toBe(200)
      expect(matched.json.data.matched_invoice_id).toBe(draft.id)
      const again = await request("POST", `/v1/bank-transactions/${eur.id}/match`, { invoice_id: draft.id })
      expect(again.status).toBe(409)
      const payments = (await request("GET", `/v1/invoices/${draft.id}/payments`)).json.data
      expect(payments.map((p: any) => [p.amount, p.source, p.method, p.reference])).toEqual([["40.00", "bank_match", "BANK_TRANSFER", "INV EXP"]])
      const beyond = await request("POST", `/v1/invoices/${draft.id}/payments`, { amount: "60.01", payment_date: "2026-03-06", method: "CASH" })
      expect([beyond.status, beyond.json.error.code]).toEqual([422, "payment_exceeds_balance"])
      const tooPrecise = await request("POST", `/v1/invoices/${draft.id}/payments`, { amount: "1.001", payment_date: "2026-03-06", method: "CASH" })
      expect([tooPrecise.status, tooPrecise.json.error.details[0].field]).toEqual([400, "amount"])
      const voided = await request("POST", `/v1/invoices/${draft.id}/void`)
      expect([voided.status, voided.json.error.code]).toEqual([409, "invalid_transition"])
      const onDraft = await request("POST", "/v1/invoices", { contact_id: contact.id, currency: "RON" })
      const payDraft = await request("POST", `/v1/invoices/${onDraft.json.data.id}/payments`, { amount: "1", payment_date: "2026-03-06", method: "CASH" })
      expect([payDraft.status, payDraft.json.error.code]).toEqual([409, "invalid_transition"])
      const huge = await request("POST", "/v1/invoices", {
        contact_id: contact.id,
        currency: "RON",
        lines: [{ description: "x", quantity: "999999999.999", unit_price: "999999999999.9999", vat_rate: 21 }]
      })
      expect([huge.status, huge.json.error.details[0].field]).toEqual([400, "lines.0"])
    })

    it("a payment retried with the same Idempotency-Key is recorded once", async () => {
      const contact = (await request("POST", "/v1/contacts", { name: "Retry client", kind: "customer" })).json.data
      const draft = (await request("POST", "/v1/invoices", {
        contact_id: contact.id,
        currency: "RON",
        lines: [{ description: "x", quantity: "1", unit_price: "100", vat_rate: 0 }]
      })).json.data
      await request("POST", `/v1/invoices/${draft.id}/issue`, { series: "IDEM" })
      const pay = () =>
        call(server, "POST", `/v1/invoices/${draft.id}/payments`, {
          token: f.tokens.api,
          headers: { "idempotency-key": `pay-${draft.id}` },
          body: { amount: "30", payment_date: "2026-03-05", method: "CASH" }
        })
      const first = await pay()
      const retry = await pay()
      expect([first.status, retry.status]).toEqual([201, 201])
      expect(retry.json.data.id).toBe(first.json.data.id)
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
      expect((await request("GET", `/v1/invoices/${draft.id}`)).json.data.paid_amount).toBe("30.00")
    })

    it("lists filter by status, contact, issue date and overdue; the numbering has no gaps under concurrent issuing", async () => {
      const contact = (await request("POST", "/v1/contacts", { name: "Busy client", kind: "customer" })).json.data
      const drafts = await Promise.all(Array.from({ length: 8 }, () =>
        request("POST", "/v1/invoices", {
          contact_id: contact.id,
          currency: "RON",
          lines: [{ description: "Unit", quantity: "1", unit_price: "10", vat_rate: 21 }]
        })))
      const issued = await Promise.all(drafts.map((d, i) =>
        request("POST", `/v1/invoices/${d.json.data.id}/issue`, {
          series: "CC",
          issue_date: "2026-01-10",
          due_date: i % 2 === 0 ? "2026-01-20" : "2999-01-01"
        })))
      expect(issued.map((r) => r.status)).toEqual(Array(8).fill(200))
      expect(issued.map((r) => r.json.data.number).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `CC-${String(i + 1).padStart(6, "0")}`))
      const overdue = await request("GET", `/v1/invoices?contact_id=${contact.id}&overdue=true`)
      expect(overdue.json.meta.total).toBe(4)
      const sent = await request("GET", `/v1/invoices?contact_id=${contact.id}&status=SENT&issue_date_from=2026-01-10&issue_date_to=2026-01-10&perPage=3`)
      expect([sent.json.meta.total, sent.json.data.length, sent.json.meta.totalPages]).toEqual([8, 3, 3])
      const badRange = await request("GET", "/v1/invoices?issue_date_from=2026-02-01&issue_date_to=2026-01-01")
      expect([badRange.status, badRange.json.error.details[0].field]).toEqual([400, "issue_date_to"])
    })
  })
}
