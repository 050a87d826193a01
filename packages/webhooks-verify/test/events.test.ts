import * as Catalog from "@opsplatform/core/events/catalog"
import { describe, expect, it } from "vitest"
import type { EventData, EventEnvelope, EventType, WebhookEvent } from "../src/node.ts"

/**
 * The package's event types against core's event catalog. The types are
 * checked by the compiler (`tsc -p tsconfig.test.json`, part of this
 * package's test script); the field lists below are checked against the
 * compiler's view of this package's types AND against core's schemas at run
 * time, so neither side can drift alone.
 */

// ---- compile time -----------------------------------------------------------

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const assert = <T extends true>(): T => true as T

/** What core publishes, as delivered: with the organization added. */
type Delivered<T extends Catalog.EventType> = Catalog.EventData<T> & { readonly organizationId: string }

type EachDataMatches = { [T in EventType]: T extends Catalog.EventType ? Same<EventData<T>, Delivered<T>> : false }

assert<Same<EventType, Catalog.EventType>>()
assert<Same<EachDataMatches[EventType], true>>()
assert<Same<Omit<EventEnvelope, "data">, Omit<Catalog.EventEnvelope, "data">>>()
assert<Same<WebhookEvent["type"], Catalog.EventType>>()

/** Every field of a data type, nested ones as `parent.child` and array items as `parent[].child`. */
type Paths<T> = {
  [K in keyof T & string]: NonNullable<T[K]> extends ReadonlyArray<infer Item>
    ? Item extends object ? K | `${K}[].${Paths<Item>}` : K
    : NonNullable<T[K]> extends object ? K | `${K}.${Paths<NonNullable<T[K]>>}`
    : K
}[keyof T & string]

const amounts = ["total", "credited_amount", "paid_amount", "remaining_amount"] as const
const invoice = ["invoice_id", "number", "currency", ...amounts, "status", "contact_id", "organizationId"] as const
const payment = ["payment", "payment.id", "payment.amount", "payment.payment_date", "payment.method", "payment.reference", "payment.source"] as const
const vehicle = ["id", "plate", "organizationId"] as const

const fields = {
  "invoice.paid": [...invoice, ...payment, "paid_at"] as const,
  "invoice.partially_paid": [...invoice, ...payment, "paid_at"] as const,
  "invoice.payment_reversed": [
    ...invoice,
    "reversal",
    "reversal.id",
    "reversal.reverses_payment_id",
    "reversal.amount",
    "reversal.reversed_at"
  ] as const,
  "invoice.credited": [...invoice, "refund_due", "fully_credited", "credit_note_id"] as const,
  "contact.fiscal_status_changed": [
    "changes",
    "changes[].kind",
    "changes[].effective_date",
    "open_invoices",
    "open_invoices.count",
    "open_invoices.balance_ron",
    "organizationId"
  ] as const,
  "delivery_route.dispatched": ["id", "number", "driver_id", "vehicle_id", "stop_count", "dispatched_at", "organizationId"] as const,
  "fleet_vehicle.created": vehicle,
  "fleet_vehicle.updated": [...vehicle, "changed_fields"] as const,
  "fleet_vehicle.deleted": vehicle,
  "court_case.hearing_added": ["id", "case_id", "hearing_date", "court", "organizationId"] as const,
  "email.received": [
    "object",
    "id",
    "message_id",
    "mailbox",
    "recipient",
    "from",
    "subject",
    "received_at",
    "size_bytes",
    "has_attachments",
    "organizationId"
  ] as const,
  "webhook.test": ["subscription_id", "organizationId"] as const
}

/** Each list names every path of its type's data, and nothing else. */
type FieldsAreExact = { [T in EventType]: Same<(typeof fields)[T][number], Paths<EventData<T>>> }
assert<Same<FieldsAreExact[EventType], true>>()

const envelopeFields = ["id", "type", "created", "environment", "data"] as const
assert<Same<(typeof envelopeFields)[number], keyof EventEnvelope>>()

// ---- run time -----------------------------------------------------------------

interface Ast {
  readonly _tag: string
  readonly propertySignatures?: ReadonlyArray<{ readonly name: PropertyKey; readonly type: Ast }>
  readonly rest?: ReadonlyArray<Ast>
  readonly types?: ReadonlyArray<Ast>
}

/** The same paths, read from a core schema. */
const pathsOf = (ast: Ast, prefix = ""): Array<string> => {
  switch (ast._tag) {
    case "Objects":
      return (ast.propertySignatures ?? []).flatMap(({ name, type }) => [
        `${prefix}${String(name)}`,
        ...pathsOf(type, `${prefix}${String(name)}.`)
      ])
    case "Arrays":
      return (ast.rest ?? []).flatMap((item) => pathsOf(item, `${prefix.slice(0, -1)}[].`))
    case "Union":
      return (ast.types ?? []).flatMap((member) => pathsOf(member, prefix))
    default:
      return []
  }
}

describe("event types", () => {
  it("are the types of core's catalog", () => {
    expect(Object.keys(fields).sort()).toEqual([...Catalog.allEventTypes].sort())
  })

  it.each(Object.entries(fields))("%s carries the fields of core's schema, plus organizationId", (type, list) => {
    const schema = Catalog.eventTypes[type as Catalog.EventType].data
    expect([...list].sort()).toEqual([...pathsOf(schema.ast as unknown as Ast), "organizationId"].sort())
  })

  it("wrap data in core's envelope", () => {
    expect(pathsOf(Catalog.EventEnvelope.ast as unknown as Ast).sort()).toEqual([...envelopeFields].sort())
  })
})
