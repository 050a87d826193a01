import { Option, Result } from "effect"
import { NetAddress } from "effect/net"

/**
 * The rate-limit key of a client address: an IPv4 address as it is (an
 * IPv4-mapped IPv6 one as its IPv4), an IPv6 address by its /64, the smallest
 * network a site is given, since one host can take any address of its /64
 * (decided: docs/decisions.md, "Limits and ranges"). A missing or
 * unparseable address shares one key.
 */
export const clientNetwork = (address: string | undefined): string => {
  if (address === undefined) return "unknown"
  const parsed = NetAddress.ipFromString(address)
  if (Result.isFailure(parsed)) return "unknown"
  const ip = parsed.success
  if (NetAddress.isIpv4Address(ip)) return NetAddress.formatIp(ip)
  const mapped = NetAddress.fromIpv4Mapped(ip)
  if (Option.isSome(mapped)) return NetAddress.formatIp(mapped.value)
  return `${NetAddress.ipv6ToSegments(ip).slice(0, 4).map((s) => s.toString(16)).join(":")}::/64`
}
