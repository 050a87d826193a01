import fc from "fast-check"
import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { EmailAddress, Host } from "../../src/mail/model.ts"

/** The patterns before they were rewritten to match in linear time: the rewrite must accept exactly what they did. */
const before = {
  email: /^[^\s@<>",;]+@[^\s@<>",;]+\.[^\s@<>",;]+$/,
  host: /^(\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+|[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?)$/
}

/** Short strings over the characters the patterns tell apart. */
const probe = (alphabet: ReadonlyArray<string>) =>
  fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }).map((cs) => cs.join(""))

const issuesOf = (schema: Schema.Codec<string, string>, value: string) => {
  const result = Schema.decodeUnknownResult(schema)(value, { errors: "all" })
  return Result.isFailure(result) ? result.failure.message : ""
}

describe("address and host patterns", () => {
  it("accept exactly what the earlier (super-linear) patterns accepted", () => {
    fc.assert(fc.property(probe(["a", "Z", ".", "@", "-", ":", " ", ",", "<", "[", "]", "1", "f", "é"]), (s) => {
      expect([s, Schema.is(EmailAddress)(s)]).toEqual([s, before.email.test(s)])
      expect([s, Schema.is(Host)(s)]).toEqual([s, before.host.test(s)])
    }), { numRuns: 20_000 })
    for (const ok of ["sales@example.com", "a.b+c@x.y.ro", "a@.b.c", "a@b..c", "a@b.c."]) expect(Schema.is(EmailAddress)(ok)).toBe(true)
    for (const bad of ["a@b", "a@b.", "a@.b", "@b.c", "a b@c.d"]) expect(Schema.is(EmailAddress)(bad)).toBe(false)
    for (const ok of ["imap.example.com", "mail-1.ex-ample.ro.", "[::1]", "fe80::1", "::ffff:10.0.0.1", "10.0.0.1"]) expect(Schema.is(Host)(ok)).toBe(true)
    for (const bad of ["-a.ro", "a-.ro", "a..ro", "imap.example.com:993", "https://x", ":"]) expect(Schema.is(Host)(bad)).toBe(false)
  })

  it("refuse a string past its length with the length check alone, even when every issue is collected", () => {
    // With `errors: "all"` the pattern used to run on the whole value after the length check had failed.
    const longAddress = `${"a".repeat(300)}@x`
    expect(issuesOf(EmailAddress, longAddress)).toBe("must be at most 254 characters")
    expect(issuesOf(Host, ":".repeat(300))).toBe("must be at most 253 characters")
    // Within the length, the pattern still speaks.
    expect(issuesOf(EmailAddress, "a@x")).toBe("must be an email address, e.g. sales@example.com")
  })
})
