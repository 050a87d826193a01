import type { Fixture } from "@opsplatform/testing"
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

export const matrixFactories: Record<string, GroupFactory> = {
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
  webhooks: {
    create: async (server, f) => {
      const id = await created(server, f.tokens.api, "/v1/webhooks", {
        url: "https://webhooks.example.com/matrix",
        event_types: ["fleet_vehicle.created"]
      })
      const test = await call(server, "POST", `/v1/webhooks/${id}/test`, { token: f.tokens.api })
      if (test.status !== 202) throw new Error(`seeding a test delivery answered ${test.status}: ${test.text}`)
      return { id, deliveryId: test.json.data.delivery_id }
    },
    bodies: {
      create: { url: "https://webhooks.example.com/matrix", event_types: ["fleet_vehicle.created"] },
      update: { description: "Changed" },
      rotateSecret: {},
      redeliver: {}
    }
  }
}
