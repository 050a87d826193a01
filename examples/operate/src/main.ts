/**
 * Calls a running server with @opsplatform/client:
 *
 *     OPSPLATFORM_URL=http://localhost:8080 OPSPLATFORM_KEY=svc_key_… npm start
 *
 * Each step prints one JSON line.
 */
import { createClient, NotFoundError } from "@opsplatform/client"

const ops = createClient({ baseUrl: process.env.OPSPLATFORM_URL ?? "http://localhost:8080", token: process.env.OPSPLATFORM_KEY! })
const print = (step: string, value: unknown) => console.log(JSON.stringify({ step, ...(value as object) }))

// Calls return the envelope's `data`, typed by path and method. A POST carries an Idempotency-Key, kept if it is retried.
const depot = await ops.post("/v1/locations", { body: { name: "Main depot", code: "DEPOT", is_primary: true, vertical_type: "warehouse" } })
print("location", { id: depot.id, name: depot.name })

for (const [description, amount] of [["Diesel, 60 l", "432.60"], ["Tolls", "38.00"], ["Parking", "12.50"]] as const) {
  await ops.post("/v1/expenses", {
    body: { description, category: "fuel", amount, currency: "RON", expense_date: "2026-11-20", location_id: depot.id }
  })
}

// `list` walks every page by cursor.
const expenses = []
for await (const expense of ops.list("/v1/expenses", { params: { query: { location_id: depot.id, perPage: "2" } } })) {
  expenses.push(`${expense.description}: ${expense.amount} ${expense.currency}`)
}
print("expenses", { expenses })

// Failures are thrown as the error class of their status, with the envelope's code and request id.
try {
  await ops.get("/v1/locations/{id}", { params: { path: { id: "00000000-0000-7000-8000-000000000000" } } })
} catch (error) {
  if (!(error instanceof NotFoundError)) throw error
  print("not found", { code: error.code, requestId: error.requestId })
}
