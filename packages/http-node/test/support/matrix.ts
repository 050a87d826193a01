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

const appBody = {
  name: "Matrix app",
  type: "confidential",
  redirect_uris: ["https://matrix.example/callback"],
  scopes: ["locations:read"],
  grant_types: ["authorization_code", "refresh_token", "client_credentials"]
}

export const matrixFactories: Record<string, GroupFactory> = {
  apps: {
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
  }
}
