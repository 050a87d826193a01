import { type Fixture, uniqueCui } from "@opsplatform/testing"
import { call, type TestServer } from "./server.ts"

/**
 * How the generated matrix reaches each API group: `create` makes one resource
 * in the fixture's live environment through the API and returns the path
 * parameters that address it; `bodies` gives a valid request body for every
 * endpoint that takes one, so a 404 cannot hide behind a 400.
 *
 * Every group with an endpoint that has path parameters or a body needs an
 * entry here; the matrix test fails for a group that has none.
 */
export interface GroupFactory {
  readonly create?: (server: TestServer, fixture: Fixture) => Promise<Record<string, string>>
  readonly bodies?: Record<string, unknown>
}

const created = async (server: TestServer, token: string, path: string, body: unknown): Promise<string> => {
  const res = await call(server, "POST", path, { token, body })
  if (res.status !== 201 && res.status !== 200) throw new Error(`seeding ${path} answered ${res.status}: ${res.text}`)
  return res.json.data.id
}

const appBody = {
  name: "Matrix app",
  type: "confidential",
  redirect_uris: ["https://matrix.example/callback"],
  scopes: ["locations:read"],
  grant_types: ["authorization_code", "refresh_token", "client_credentials"]
}

const obligationBody = (contractId: string) => ({
  contract_id: contractId,
  title: "Matrix obligation",
  type: "report",
  due_date: "2099-01-31"
})
const matrixRoute = {
  name: "Matrix route",
  route_date: "2026-03-02T07:00:00+02:00",
  start_latitude: 44.49,
  start_longitude: 26.17,
  stops: [{ label: "Matrix stop", latitude: 44.43, longitude: 26.1 }]
}

const invoiceLine = { description: "Matrix work", quantity: "1", unit_price: "100", vat_rate: 21 }

/** An issued invoice with a payment, a credit note and a bank line, so every invoices path has a real resource. */
const seedInvoice = async (server: TestServer, token: string) => {
  const contactId = await created(server, token, "/v1/contacts", { name: "Matrix client", kind: "customer" })
  const invoiceId = await created(server, token, "/v1/invoices", { contact_id: contactId, currency: "RON", lines: [invoiceLine] })
  const issued = await call(server, "POST", `/v1/invoices/${invoiceId}/issue`, { token, body: { series: "MX" } })
  if (issued.status !== 200) throw new Error(`issuing answered ${issued.status}: ${issued.text}`)
  const paymentId = await created(server, token, `/v1/invoices/${invoiceId}/payments`, {
    amount: "10.00",
    payment_date: "2026-03-02",
    method: "CASH"
  })
  const creditNoteId = await created(server, token, `/v1/invoices/${invoiceId}/credit-notes`, { reason: "Matrix", amount: "5.00" })
  const lines = await call(server, "POST", "/v1/bank-transactions", {
    token,
    body: { lines: [{ booking_date: "2026-03-02", amount: "1.00", currency: "RON" }] }
  })
  if (lines.status !== 201) throw new Error(`importing bank lines answered ${lines.status}: ${lines.text}`)
  return { id: invoiceId, paymentId, creditNoteId, bankTransactionId: lines.json.data[0].id as string }
}

const subscriptionBody = (contactId: string) => ({
  contact_id: contactId,
  processor_customer_id: "cus_Matrix",
  meter_event_name: "matrix_events"
})

// Disabled: no sync process sharing the database tries this made-up server.
const mailboxBody = {
  address: "matrix@example.com",
  enabled: false,
  imap: { host: "imap.example.com", username: "matrix@example.com", password: "matrix-secret" }
}

export const matrixFactories: Record<string, GroupFactory> = {
  mail: {
    create: async (server, f) => ({ id: await created(server, f.tokens.api, "/v1/mailboxes", mailboxBody) }),
    bodies: { create: mailboxBody, update: { aliases: ["sales@example.com"] } }
  },
  display: {
    create: async (server, f) => {
      const res = await call(server, "POST", "/v1/display/devices", { token: f.tokens.api, body: { name: "Matrix display" } })
      if (res.status !== 201) throw new Error(`seeding a display device answered ${res.status}: ${res.text}`)
      return { id: res.json.data.device.id }
    },
    bodies: {
      create: { name: "Matrix display" },
      update: { name: "Renamed" },
      rotateToken: {},
      setPin: { pin: "2468" },
      unlock: { pin: "2468" },
      ask: { text: "cât am încasat luna asta?" }
    }
  },
  metering: {
    create: async (server, f) => {
      const contactId = await created(server, f.tokens.api, "/v1/contacts", { name: "Matrix customer", kind: "customer" })
      return { id: await created(server, f.tokens.api, "/v1/subscriptions", subscriptionBody(contactId)) }
    },
    bodies: {
      create: subscriptionBody("00000000-0000-4000-8000-00000000c0de"),
      update: { meter_event_name: "renamed_events" },
      reportUsage: { quantity: 1 }
    }
  },
  contacts: {
    create: async (server, f) => ({ id: await created(server, f.tokens.api, "/v1/contacts", { name: "Matrix", kind: "supplier" }) }),
    bodies: { create: { name: "Matrix", kind: "supplier" }, update: { name: "Renamed" } }
  },
  fiscal: {
    create: async (server, f) => ({ id: await created(server, f.tokens.api, "/v1/contacts", { name: "Matrix", kind: "customer" }) })
  },
  invoices: {
    create: (server, f) => seedInvoice(server, f.tokens.api),
    bodies: {
      create: { contact_id: "00000000-0000-4000-8000-00000000c0de", currency: "RON", lines: [invoiceLine] },
      update: { notes: "Changed" },
      issue: { series: "MX" },
      recordPayment: { amount: "1.00", payment_date: "2026-03-02", method: "CASH" },
      markPaid: {},
      reversePayment: {},
      refund: { amount: "1.00", refund_date: "2026-03-02", method: "CASH" },
      issueCreditNote: { reason: "Matrix", amount: "1.00" },
      importBankTransactions: { lines: [{ booking_date: "2026-03-02", amount: "1.00", currency: "RON" }] },
      matchBankTransaction: { invoice_id: "00000000-0000-4000-8000-00000000c0de" }
    }
  },
  contracts: {
    create: async (server, f) => ({ id: await created(server, f.tokens.api, "/v1/contracts", { name: "Matrix contract" }) }),
    bodies: { create: { name: "Matrix contract" }, update: { name: "Renamed" } }
  },
  obligations: {
    create: async (server, f) => {
      const contractId = await created(server, f.tokens.api, "/v1/contracts", { name: "Matrix contract" })
      return { id: await created(server, f.tokens.api, "/v1/contract-obligations", obligationBody(contractId)) }
    },
    bodies: {
      create: obligationBody("00000000-0000-4000-8000-00000000c0de"),
      update: { title: "Changed" },
      complete: { evidence_note: "Done" }
    }
  },
  tenancy: {
    bodies: { update: { escalation_delay_days: 5 } }
  },
  oauth: {
    create: async (server, f) => {
      const res = await call(server, "POST", "/v1/apps", { token: f.tokens.api, body: appBody })
      if (res.status !== 201) throw new Error(`seeding /v1/apps answered ${res.status}: ${res.text}`)
      return {
        id: res.json.data.id,
        installationId: await created(server, f.tokens.api, "/v1/app-installations", {
          client_id: res.json.data.client_id,
          scopes: ["locations:read"]
        })
      }
    },
    bodies: {
      create: appBody,
      update: { name: "Renamed" },
      install: { client_id: "app_matrix", scopes: ["locations:read"] }
    }
  },
  locations: {
    create: async (server, f) => ({ id: await created(server, f.tokens.api, "/v1/locations", { name: "Matrix site" }) }),
    bodies: { create: { name: "Matrix site" }, update: { name: "Renamed" } }
  },
  expenses: {
    create: async (server, f) => ({
      id: await created(server, f.tokens.api, "/v1/expenses", {
        description: "Matrix",
        category: "other",
        amount: "1.00",
        currency: "EUR",
        expense_date: "2026-01-01"
      })
    }),
    bodies: {
      create: { description: "Matrix", category: "other", amount: "1.00", currency: "EUR", expense_date: "2026-01-01" },
      update: { description: "Changed" }
    }
  },
  routes: {
    create: async (server, f) => {
      const res = await call(server, "POST", "/v1/delivery-routes", { token: f.tokens.api, body: matrixRoute })
      if (res.status !== 201) throw new Error(`seeding a delivery route answered ${res.status}: ${res.text}`)
      return { id: res.json.data.id, stopId: res.json.data.stops[0].id }
    },
    bodies: {
      create: matrixRoute,
      update: { name: "Renamed" },
      addStop: { label: "Extra", latitude: 44.44, longitude: 26.11 },
      updateStop: { label: "Changed" },
      reorderStops: { stop_ids: ["00000000-0000-4000-8000-000000000001"] }
    }
  },
  costing: {
    bodies: {
      putFleetCostProfile: { currency: "RON", fuel_consumption_l_per_100km: 9.5, fuel_price_per_litre_minor: 745, driver_cost_per_hour_minor: 4500 },
      putRateCard: { currency: "RON", couriers: [{ name: "Matrix", bands: [{ up_to_km: 10, per_parcel_minor: 1000, per_kg_minor: 50 }] }] },
      putSenderAddress: { name: "Matrix depot", line1: "Str. 1", city: "Voluntari", country: "RO" }
    }
  },
  fleet: {
    create: async (server, f) => ({
      id: await created(server, f.tokens.api, "/v1/fleet-vehicles", { plate: "B 100 MTX", fuel_type: "diesel" })
    }),
    bodies: { create: { plate: "B 101 MTX", fuel_type: "diesel" }, update: { make: "Renamed" } }
  },
  court: {
    create: async (server, f) => {
      const id = await created(server, f.tokens.api, "/v1/court-cases", { number: "100/3/2026", court: "Tribunalul București" })
      return { id, hearingId: await created(server, f.tokens.api, `/v1/court-cases/${id}/hearings`, { hearing_date: "2026-04-15" }) }
    },
    bodies: {
      create: { number: "101/3/2026", court: "Tribunalul București" },
      update: { notes: "Changed" },
      addHearing: { hearing_date: "2026-04-16" },
      updateHearing: { solution: "Amână" }
    }
  },
  grants: {
    // A request for a VAT number no organization holds: a grant of the owner's all the same.
    create: async (server, f) => ({
      id: await created(server, f.tokens.api, "/v1/cabinet/access-grants", { counterparty_vat_number: uniqueCui(), role: "cabinet" })
    }),
    bodies: { create: { counterparty_vat_number: uniqueCui(), role: "cabinet" } }
  },
  webhooks: {
    create: async (server, f) => {
      // A v1a subscription, so its public-keys path answers a real key.
      const id = await created(server, f.tokens.api, "/v1/webhooks", {
        url: "https://webhooks.example.com/matrix",
        event_types: ["fleet_vehicle.created"],
        signing_scheme: "v1a"
      })
      const test = await call(server, "POST", `/v1/webhooks/${id}/test`, { token: f.tokens.api })
      if (test.status !== 202) throw new Error(`seeding a test delivery answered ${test.status}: ${test.text}`)
      return { id, deliveryId: test.json.data.delivery_id }
    },
    bodies: {
      create: { url: "https://webhooks.example.com/matrix", event_types: ["fleet_vehicle.created"], signing_scheme: "v1a" },
      update: { description: "Changed" },
      rotateSecret: { signing_scheme: "v1a" },
      redeliver: {}
    }
  },
  imports: {
    create: async (server, f) => {
      const response = await fetch(`${server.url}/v1/imports?entity=locations`, {
        method: "POST",
        headers: { authorization: `Bearer ${f.tokens.api}`, "content-type": "text/csv" },
        body: "Cod,Denumire\nMX-1,Matrix site\n"
      })
      const body = await response.json() as { data: { id: string } }
      if (response.status !== 201) throw new Error(`seeding an import job answered ${response.status}`)
      return { id: body.data.id }
    }
  }
}
