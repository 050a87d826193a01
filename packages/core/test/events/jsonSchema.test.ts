import { Schema } from "effect"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { describe, expect, it } from "vitest"
import * as Events from "../../src/events/catalog.ts"

/**
 * The JSON Schema of every event type, generated from its Effect schema, read
 * by a validator receivers use (Ajv, draft 2020-12 with formats): the
 * example body of each type passes, and a body with a field too many, one
 * missing or of the wrong type does not.
 */

const ajv = new Ajv2020({ strict: true, allErrors: true })
addFormats.default(ajv)

const validatorOf = (type: Events.EventType) => ajv.compile(Events.eventJsonSchema(type))

describe("event JSON Schemas", () => {
  it.each([...Events.allEventTypes])("%s: the example body validates, and decodes through the Effect schema", (type) => {
    const validate = validatorOf(type)
    const body = Events.exampleBody(type)
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true)
    expect(Schema.decodeUnknownSync(Events.deliveredBodySchema(type))(body)).toEqual(body)
  })

  it.each([...Events.allEventTypes])("%s: an extra, a missing or a mistyped data field is refused", (type) => {
    const validate = validatorOf(type)
    const body = Events.exampleBody(type)
    expect(validate({ ...body, data: { ...body.data, body: "the message text" } })).toBe(false)
    const [first] = Object.keys(body.data)
    const { [first!]: _dropped, ...missing } = body.data
    expect(validate({ ...body, data: missing })).toBe(false)
    expect(validate({ ...body, data: { ...body.data, organizationId: 42 } })).toBe(false)
    expect(validate({ ...body, type: "invoice.refunded" })).toBe(false)
  })

  it("names the schema's dialect and its type, with the catalog's description", () => {
    const schema = Events.eventJsonSchema("email.received")
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema")
    expect(schema.title).toBe("email.received")
    expect(schema.description).toBe(Events.eventTypes["email.received"].description)
    const data = (schema.properties as Record<string, { properties: Record<string, unknown>; additionalProperties: boolean }>).data
    expect(Object.keys(data.properties).sort()).toEqual([...Object.keys(Events.EmailReceivedData.fields), "organizationId"].sort())
    expect(data.additionalProperties).toBe(false)
  })
})
