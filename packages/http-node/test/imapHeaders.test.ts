import { describe, expect, it } from "vitest"
import { deliveryAddresses, MAX_HEADER_LINE } from "../src/server/imapMailSource.ts"

const headers = (text: string) => Buffer.from(text, "utf8")

describe("the delivery headers of an incoming message", () => {
  it("give their addresses, unfolded, in order", () => {
    expect(deliveryAddresses(headers(
      "Delivered-To: <sales@example.com>\r\nX-Original-To:\r\n\t\"Facturi\" <facturi@example.ro>\r\nSubject: x@y.z\r\n"
    ))).toEqual(["sales@example.com", "facturi@example.ro"])
    expect(deliveryAddresses(headers("X-Original-To: list:one@example.com\n"))).toEqual(["one@example.com"])
    expect(deliveryAddresses(undefined)).toEqual([])
  })

  it("are read only up to RFC 5322's 998 characters a line, so a long line costs bounded work", () => {
    // 60 000 address characters without an `@` once took the matcher seconds (a quadratic scan) before the address after them.
    const long = `X-Original-To: ${"a".repeat(60_000)} late@example.com\r\n`
    const started = performance.now()
    expect(deliveryAddresses(headers(long))).toEqual([])
    expect(performance.now() - started).toBeLessThan(1000)
    // Within the line limit an address is found wherever it stands; a folded field is cut at the limit too.
    const edge = "a".repeat(MAX_HEADER_LINE - "X-Original-To: ".length - " e@x.ro".length)
    expect(deliveryAddresses(headers(`X-Original-To: ${edge} e@x.ro\r\n`))).toEqual(["e@x.ro"])
    expect(deliveryAddresses(headers(`X-Original-To: ${edge}a e@x.ro\r\n`))).toEqual([])
    expect(deliveryAddresses(headers(`X-Original-To: ${"b".repeat(900)}\r\n ${"c".repeat(900)}\r\n folded@x.ro\r\n`))).toEqual([])
  })
})
