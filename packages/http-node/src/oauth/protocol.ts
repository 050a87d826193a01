import { Context, Effect, Option, Result } from "effect"
import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "effect/http"
import { IpNetwork, NetAddress } from "effect/net"
import { OAuthErrors } from "@opsplatform/core"

/**
 * The server's public base URL (`OPSPLATFORM_PUBLIC_URL`): the OAuth issuer
 * and the root of every OAuth address; and the proxies whose forwarded
 * headers are believed (`OPSPLATFORM_TRUSTED_PROXIES`). See `issuerOf`.
 */
export const OAuthHttpConfig = Context.Reference<{
  readonly publicUrl: string | undefined
  readonly trustedProxies: ReadonlyArray<IpNetwork.IpNetwork>
}>(
  "@opsplatform/http-node/OAuthHttpConfig",
  { defaultValue: () => ({ publicUrl: undefined, trustedProxies: [] }) }
)

/** Why a configured public URL is unusable, or undefined when it is fine. */
export const publicUrlIssue = (url: string): string | undefined => {
  try {
    const u = new URL(url)
    if (u.protocol !== "https:" && u.protocol !== "http:") return "must be an http or https URL"
    if (u.search !== "" || u.hash !== "" || u.username !== "" || u.password !== "") {
      return "must have no query, fragment or user information"
    }
    return undefined
  } catch {
    return "must be an absolute URL"
  }
}

const hostPattern = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/

const isLoopbackHost = (name: string): boolean => {
  const bare = name.startsWith("[") ? name.slice(1, -1) : name
  if (bare.toLowerCase() === "localhost") return true
  const ip = NetAddress.ipFromString(bare)
  return Result.isSuccess(ip) && NetAddress.isLoopback(ip.success)
}

/** Whether the connection's peer is a proxy the operator named. */
const fromTrustedProxy = (request: HttpServerRequest.HttpServerRequest, trusted: ReadonlyArray<IpNetwork.IpNetwork>) => {
  if (trusted.length === 0) return false
  const peer = Option.flatMap(request.peerAddress, (a) => Option.getSuccess(NetAddress.ipFromString(a)))
  return Option.isSome(peer) && trusted.some((network) => IpNetwork.contains(network, peer.value))
}

/**
 * The issuer identifier (RFC 8414), no trailing slash (decided:
 * docs/decisions.md, "OAuth 2.0"): the configured public URL; without one,
 * the request's Host only when a trusted proxy passed it on or it names this
 * machine (localhost, a loopback address) — a Host anyone can send never
 * names the issuer, so a client reaching the server by another name is told
 * `http://localhost` and `doctor` warns.
 */
export const issuerOf = Effect.gen(function*() {
  const config = yield* OAuthHttpConfig
  if (config.publicUrl !== undefined) return config.publicUrl.replace(/(?<!\/)\/+$/, "")
  const request = yield* HttpServerRequest.HttpServerRequest
  const host = hostPattern.exec(request.headers.host ?? "")
  if (host === null) return "http://localhost"
  if (fromTrustedProxy(request, config.trustedProxies)) return `${request.protocol ?? "http"}://${host[0]}`
  return isLoopbackHost(host[1]!) ? `http://${host[0]}` : `http://localhost${host[2] === undefined ? "" : `:${host[2]}`}`
})

/** Whether the issuer comes from configuration, and so may be cached by anyone. */
export const issuerIsConfigured = Effect.map(OAuthHttpConfig, (config) => config.publicUrl !== undefined)

/**
 * The request as its trusted proxies describe it: `remoteAddress` the client
 * (the first untrusted address of X-Forwarded-For, walked from the right),
 * and their X-Forwarded-Host and -Proto. Without trusted proxies, as it came.
 */
export const behindTrustedProxies = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(OAuthHttpConfig, (config) =>
    config.trustedProxies.length === 0
      ? handler
      : HttpMiddleware.xForwardedHeaders({ trustedProxies: config.trustedProxies })(handler))

/** The client's address, as the sign-in and authorize limits count it. */
export const clientAddressOf = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => Option.getOrUndefined(request.remoteAddress)
)

// ---------------------------------------------------------------- responses

/**
 * Never cached (RFC 6749 §5.1), and readable from any origin: a public app in
 * a browser calls these endpoints across origins. No cookie is involved, and
 * a browser does not send any with a wildcard origin, so the wildcard adds no reach.
 */
export const protocolHeaders = { "cache-control": "no-store", pragma: "no-cache", "access-control-allow-origin": "*" } as const

/** A JSON answer of the token, revocation or introspection endpoint. */
export const oauthJson = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { ...protocolHeaders, ...headers } })

/** RFC 6749 §5.2 allows only %x20-21 / %x23-5B / %x5D-7E in error_description. */
export const describable = (text: string): string => text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "?")

/** An RFC 6749 §5.2 error; `invalid_client` is a 401 naming the Basic scheme (§5.2, RFC 7235). */
export const oauthErrorResponse = (error: OAuthErrors.OAuthError) =>
  oauthJson(
    error.statusCode,
    { error: error.error, error_description: describable(error.description) },
    error.error === "invalid_client" ? { "www-authenticate": `Basic realm="opsplatform", charset="UTF-8"` } : {}
  )

// ---------------------------------------------------------------- requests

const oauthError = (error: OAuthErrors.OAuthErrorCode, description: string) =>
  new OAuthErrors.OAuthError({ error, description })

/**
 * Parameters as RFC 6749 §3.1 reads them: a parameter sent without a value is
 * omitted, and one sent twice makes the request invalid.
 */
export const parseParameters = (
  params: URLSearchParams
): Result.Result<ReadonlyMap<string, string>, OAuthErrors.OAuthError> => {
  const values = new Map<string, string>()
  for (const [name, value] of params) {
    if (value === "") continue
    if (values.has(name)) return Result.fail(oauthError("invalid_request", `The parameter ${name} is repeated`))
    values.set(name, value)
  }
  return Result.succeed(values)
}

/** The body of a token, revocation or introspection request: application/x-www-form-urlencoded only. */
export const readForm = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (type !== "application/x-www-form-urlencoded") {
    return yield* Effect.fail(oauthError("invalid_request", "Send the parameters form-encoded (application/x-www-form-urlencoded)"))
  }
  const body = yield* request.text.pipe(
    Effect.mapError(() => oauthError("invalid_request", "The request body could not be read"))
  )
  return yield* Effect.fromResult(parseParameters(new URLSearchParams(body)))
})

/** `application/x-www-form-urlencoded` decoding of one Basic credential half (RFC 6749 §2.3.1). */
const formDecode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

export interface ClientCredentials {
  readonly clientId: string
  readonly secret: string | undefined
}

/**
 * Who the client says it is: `client_secret_basic` (Authorization: Basic),
 * `client_secret_post` (client_id and client_secret in the body), or a public
 * client's bare client_id. Two methods in one request are refused (RFC 6749 §2.3).
 */
export const clientCredentialsOf = (
  authorization: string | undefined,
  params: ReadonlyMap<string, string>
): Result.Result<ClientCredentials, OAuthErrors.OAuthError> => {
  const bodyId = params.get("client_id")
  const bodySecret = params.get("client_secret")
  if (authorization !== undefined && authorization !== "") {
    const match = /^Basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(authorization)
    if (match === null) return Result.fail(oauthError("invalid_client", "Authenticate with HTTP Basic or in the body"))
    let decoded: string
    try {
      decoded = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(atob(match[1]!), (c) => c.charCodeAt(0)))
    } catch {
      return Result.fail(oauthError("invalid_client", "The Basic credentials are not valid base64 of UTF-8"))
    }
    const colon = decoded.indexOf(":")
    const id = colon < 0 ? undefined : formDecode(decoded.slice(0, colon))
    const secret = colon < 0 ? undefined : formDecode(decoded.slice(colon + 1))
    if (id === undefined || secret === undefined || id === "") {
      return Result.fail(oauthError("invalid_client", "The Basic credentials must be client_id:client_secret"))
    }
    if (bodySecret !== undefined) {
      return Result.fail(oauthError("invalid_request", "Use one client authentication method: Basic or client_secret in the body, not both"))
    }
    if (bodyId !== undefined && bodyId !== id) {
      return Result.fail(oauthError("invalid_request", "client_id in the body differs from the authenticated client"))
    }
    return Result.succeed({ clientId: id, secret })
  }
  if (bodyId === undefined) return Result.fail(oauthError("invalid_client", "The request names no client (client_id)"))
  return Result.succeed({ clientId: bodyId, secret: bodySecret })
}
