import type { Environment } from "../shared/tenant.ts"

/**
 * Where webhooks may go. A subscription's URL is checked when it is saved,
 * and every address it resolves to is checked again when a delivery is sent
 * (the transport connects only to an address that passed), so a name that
 * later resolves to an internal address cannot reach the operator's network.
 */

const parseIpv4 = (text: string): ReadonlyArray<number> | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const bytes = parts.map((p) => (/^(0|[1-9]\d{0,2})$/.test(p) ? Number(p) : Number.NaN))
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : undefined
}

/** The 16 bytes of an IPv6 address (with an embedded IPv4 tail allowed), or undefined. */
const parseIpv6 = (text: string): ReadonlyArray<number> | undefined => {
  let address = text
  const zone = address.indexOf("%")
  if (zone >= 0) address = address.slice(0, zone)
  let tail: ReadonlyArray<number> = []
  const lastColon = address.lastIndexOf(":")
  if (address.slice(lastColon + 1).includes(".")) {
    const v4 = parseIpv4(address.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    tail = v4
    address = address.slice(0, lastColon + 1) + "0:0"
  }
  const halves = address.split("::")
  if (halves.length > 2) return undefined
  const groups = (s: string) => (s === "" ? [] : s.split(":"))
  const head = groups(halves[0]!)
  const rest = halves.length === 2 ? groups(halves[1]!) : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const all = [...head, ...Array.from({ length: halves.length === 2 ? missing : 0 }, () => "0"), ...rest]
  const bytes: Array<number> = []
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return undefined
    const n = parseInt(g, 16)
    bytes.push(n >> 8, n & 0xff)
  }
  if (tail.length === 4) bytes.splice(12, 4, ...tail)
  return bytes
}

const inV4 = (b: ReadonlyArray<number>, prefix: ReadonlyArray<number>, bits: number): boolean => {
  for (let i = 0; i < 4; i++) {
    const take = Math.max(0, Math.min(8, bits - i * 8))
    if (take === 0) return true
    const mask = (0xff << (8 - take)) & 0xff
    if ((b[i]! & mask) !== (prefix[i]! & mask)) return false
  }
  return true
}

/** Ranges no webhook may reach: this host, private networks, link-local, shared, reserved, documentation, multicast. */
const blockedV4: ReadonlyArray<readonly [ReadonlyArray<number>, number]> = [
  [[0, 0, 0, 0], 8],
  [[10, 0, 0, 0], 8],
  [[100, 64, 0, 0], 10],
  [[127, 0, 0, 0], 8],
  [[169, 254, 0, 0], 16],
  [[172, 16, 0, 0], 12],
  [[192, 0, 0, 0], 24],
  [[192, 0, 2, 0], 24],
  [[192, 88, 99, 0], 24],
  [[192, 168, 0, 0], 16],
  [[198, 18, 0, 0], 15],
  [[198, 51, 100, 0], 24],
  [[203, 0, 113, 0], 24],
  [[224, 0, 0, 0], 4],
  [[240, 0, 0, 0], 4]
]

const isPublicV4 = (b: ReadonlyArray<number>): boolean => !blockedV4.some(([prefix, bits]) => inV4(b, prefix, bits))

/**
 * IPv6 forms that carry an IPv4 address are judged by that address, since a
 * relay or translator on the way may deliver to it (decided:
 * docs/decisions.md, "Limits and ranges"): IPv4-mapped `::ffff:0:0/96`,
 * IPv4-translated `::ffff:0:0:0/96` (RFC 2765), IPv4-compatible `::/96`,
 * NAT64 `64:ff9b::/96` (RFC 6052), 6to4 `2002::/16` (RFC 3056: bits 16–47) and
 * Teredo `2001::/32` (RFC 4380: the server in bits 32–63, the client
 * inverted in the last 32; both must be public). The local-use NAT64 prefix
 * `64:ff9b:1::/48` (RFC 8215) embeds at an offset its operator chooses, so it
 * is refused whole, as are the other non-global blocks of `2001::/23`.
 */
const isPublicV6 = (b: ReadonlyArray<number>): boolean => {
  const allZeroUpTo = (n: number) => b.slice(0, n).every((x) => x === 0)
  const zeroBetween = (from: number, to: number) => b.slice(from, to).every((x) => x === 0)
  // :: and ::1
  if (allZeroUpTo(15) && (b[15] === 0 || b[15] === 1)) return false
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d: judge the IPv4 address.
  if (allZeroUpTo(10) && b[10] === 0xff && b[11] === 0xff) return isPublicV4(b.slice(12))
  if (allZeroUpTo(12)) return isPublicV4(b.slice(12))
  // IPv4-translated ::ffff:0:a.b.c.d.
  if (allZeroUpTo(8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return isPublicV4(b.slice(12))
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    // NAT64 64:ff9b::/96 carries an IPv4 address too; nothing else of 64:ff9b::/32 is global.
    return zeroBetween(4, 12) && isPublicV4(b.slice(12))
  }
  // 6to4 2002:aabb:ccdd::/48.
  if (b[0] === 0x20 && b[1] === 0x02) return isPublicV4(b.slice(2, 6))
  if (b[0] === 0x20 && b[1] === 0x01 && (b[2]! & 0xfe) === 0x00) {
    // Teredo 2001:0000::/32: the server's address, and the client's (inverted) at the end.
    if (b[2] === 0 && b[3] === 0) return isPublicV4(b.slice(4, 8)) && isPublicV4(b.slice(12).map((x) => x ^ 0xff))
    // The rest of 2001::/23 is IETF protocol assignments, none a webhook receiver.
    return false
  }
  const first = b[0]!
  const second = b[1]!
  if ((first & 0xfe) === 0xfc) return false // fc00::/7 unique local
  if (first === 0xfe && (second & 0xc0) === 0x80) return false // fe80::/10 link-local
  if (first === 0xfe && (second & 0xc0) === 0xc0) return false // fec0::/10 site-local (deprecated)
  if (first === 0xff) return false // ff00::/8 multicast
  if (first === 0x20 && second === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return false // 2001:db8::/32 documentation
  if (first === 0x01 && second === 0x00 && b.slice(2, 8).every((x) => x === 0)) return false // 100::/64 discard
  return true
}

/** Whether `host` is an IP address literal (IPv6 with or without brackets). */
export const isIpLiteral = (host: string): boolean => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  return parseIpv4(bare) !== undefined || (bare.includes(":") && parseIpv6(bare) !== undefined)
}

/**
 * Whether an address may receive webhooks: not loopback, private, link-local,
 * unique-local, shared (CGNAT), reserved, documentation or multicast.
 * Anything that does not parse as an address is not public.
 */
export const isPublicAddress = (address: string): boolean => {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  const v4 = parseIpv4(bare)
  if (v4 !== undefined) return isPublicV4(v4)
  const v6 = bare.includes(":") ? parseIpv6(bare) : undefined
  return v6 !== undefined && isPublicV6(v6)
}

/** Names that always mean this machine or its local network, whatever DNS says. */
export const isLocalName = (host: string): boolean => {
  const h = host.toLowerCase().replace(/\.$/, "")
  return h === "localhost" || h.endsWith(".localhost") || h.endsWith(".local") || h.endsWith(".internal") ||
    h === "metadata.google.internal"
}

export type UrlCheck =
  | { readonly _tag: "Ok"; readonly url: string; readonly hostname: string }
  | { readonly _tag: "Refused"; readonly issue: string }

/**
 * A subscription URL as the API accepts it: absolute, https in live (http also
 * in the sandbox), no user name or password, no fragment, and — unless the
 * operator allows private destinations — no loopback, private or local host.
 */
export const checkWebhookUrl = (
  input: string,
  environment: Environment,
  allowPrivate: boolean
): UrlCheck => {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return { _tag: "Refused", issue: "must be an absolute URL, e.g. https://example.com/webhooks" }
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && environment === "sandbox")) {
    return {
      _tag: "Refused",
      issue: environment === "live"
        ? "must use https in the live environment"
        : "must use https or http"
    }
  }
  if (url.username !== "" || url.password !== "") {
    return { _tag: "Refused", issue: "must not contain a user name or password; authenticate receivers by the signature" }
  }
  if (url.hash !== "") return { _tag: "Refused", issue: "must not contain a fragment (#...)" }
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  if (hostname === "") return { _tag: "Refused", issue: "must name a host" }
  if (!allowPrivate) {
    if (isLocalName(hostname)) return { _tag: "Refused", issue: "must not point to a local host name" }
    if (isIpLiteral(hostname) && !isPublicAddress(hostname)) {
      return { _tag: "Refused", issue: "must not point to a loopback, private, link-local or multicast address" }
    }
  }
  return { _tag: "Ok", url: url.href, hostname }
}
