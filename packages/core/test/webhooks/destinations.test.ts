import { describe, expect, it } from "vitest"
import { checkWebhookUrl, isIpLiteral, isPublicAddress } from "../../src/webhooks/destinations.ts"

describe("isPublicAddress", () => {
  it("refuses loopback, private, link-local, unique-local, shared, reserved and multicast ranges", () => {
    for (
      const address of [
        "127.0.0.1",
        "127.255.255.254",
        "0.0.0.0",
        "10.0.0.1",
        "10.255.255.255",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "100.127.255.255",
        "192.0.2.10",
        "198.18.0.1",
        "198.51.100.7",
        "203.0.113.9",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "[::1]",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "fe80::1%eth0",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.1.2.3",
        "::ffff:7f00:1",
        "64:ff9b::a00:1",
        "2001:db8::1",
        "not an address",
        ""
      ]
    ) {
      expect(isPublicAddress(address), address).toBe(false)
    }
  })

  it("judges an IPv6 address that embeds an IPv4 address by the IPv4 address (issue 28, item 6)", () => {
    const embeddingInternal = [
      // 6to4 of 127.0.0.1, 10.0.0.1, 192.168.1.1, 169.254.169.254
      "2002:7f00:1::",
      "2002:a00:1::1",
      "2002:c0a8:101:1::1",
      "2002:a9fe:a9fe::",
      // Teredo: a private server, or a client 10.0.0.1 (inverted: f5ff:fffe)
      "2001:0:a00:1::1",
      "2001:0:808:808:0:0:f5ff:fffe",
      // NAT64 of 127.0.0.1, and the local-use NAT64 prefix (any address in it)
      "64:ff9b::7f00:1",
      "64:ff9b:1::a00:1",
      "64:ff9b:1:ffff::808:808",
      // IPv4-mapped and IPv4-translated 10.0.0.1
      "::ffff:a00:1",
      "::ffff:0:a00:1",
      "::ffff:0:10.0.0.1",
      // Other IETF blocks of 2001::/23 (benchmarking, ORCHID)
      "2001:2::1",
      "2001:10::1"
    ]
    for (const address of embeddingInternal) expect(isPublicAddress(address), address).toBe(false)
    const embeddingPublic = ["2002:808:808::1", "2001:0:808:808:0:0:f7f7:f7f7", "64:ff9b::808:808", "::ffff:0:8.8.8.8"]
    for (const address of embeddingPublic) expect(isPublicAddress(address), address).toBe(true)
  })

  it("accepts public unicast addresses of both families", () => {
    for (
      const address of ["93.184.215.14", "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "[2a00:1450:4001::200e]", "::ffff:8.8.8.8"]
    ) {
      expect(isPublicAddress(address), address).toBe(true)
    }
  })

  it("tells address literals from names", () => {
    expect(isIpLiteral("10.0.0.1")).toBe(true)
    expect(isIpLiteral("[::1]")).toBe(true)
    expect(isIpLiteral("2001:db8::1")).toBe(true)
    expect(isIpLiteral("example.com")).toBe(false)
    expect(isIpLiteral("10.0.0")).toBe(false)
  })
})

describe("checkWebhookUrl", () => {
  const refused = (url: string, env: "live" | "sandbox" = "live", allowPrivate = false) => {
    const r = checkWebhookUrl(url, env, allowPrivate)
    return r._tag === "Refused" ? r.issue : undefined
  }

  it("wants https in live, accepts http too in the sandbox, and nothing else", () => {
    expect(refused("https://hooks.example.com/in")).toBeUndefined()
    expect(refused("http://hooks.example.com/in")).toMatch(/https in the live environment/)
    expect(refused("http://hooks.example.com/in", "sandbox")).toBeUndefined()
    expect(refused("ftp://hooks.example.com/in", "sandbox")).toMatch(/https or http/)
    expect(refused("hooks.example.com/in")).toMatch(/absolute URL/)
  })

  it("refuses credentials, fragments and local destinations unless the operator allows private ones", () => {
    expect(refused("https://user:pw@hooks.example.com/")).toMatch(/user name or password/)
    expect(refused("https://hooks.example.com/#x")).toMatch(/fragment/)
    for (const url of ["https://localhost/", "https://api.localhost/", "https://printer.local/", "https://127.0.0.1/", "https://[::1]:8443/", "https://10.1.2.3/", "https://169.254.169.254/latest", "https://0x7f.1/", "https://2130706433/"]) {
      expect(refused(url), url).toBeDefined()
      expect(refused(url, "live", true), url).toBeUndefined()
    }
  })

  it("normalizes what it accepts", () => {
    expect(checkWebhookUrl("HTTPS://Hooks.Example.COM:443/a?b=1", "live", false)).toEqual({
      _tag: "Ok",
      url: "https://hooks.example.com/a?b=1",
      hostname: "hooks.example.com"
    })
  })
})
