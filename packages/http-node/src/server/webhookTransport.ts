import { Effect, Layer } from "effect"
import { WebhookDestinations, WebhookTransport } from "@opsplatform/core"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import * as tls from "node:tls"

/** After the kept part of an answer, how much more is read (and dropped) so the connection can be reused. */
const DRAIN_LIMIT = 64 * 1024

class UnsafeDestination extends Error {
  readonly code = "UNSAFE_DESTINATION"
}

/**
 * Resolves like the system resolver, then refuses the whole name when any
 * answer is not a public address. The socket connects to what this returns,
 * so the address checked is the address used (no DNS rebinding).
 */
const checkedLookup = (allowPrivate: boolean): LookupFunction => (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "", 0)
    const list = addresses as unknown as ReadonlyArray<dns.LookupAddress>
    if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0)
    if (!allowPrivate) {
      const blocked = list.find((a) => !WebhookDestinations.isPublicAddress(a.address))
      if (blocked !== undefined) {
        return callback(
          new UnsafeDestination(`${hostname} resolves to ${blocked.address}, a loopback, private, link-local or multicast address`),
          "",
          0
        )
      }
    }
    // dns.lookup's callback takes the whole list when `all` is set; its type only names the single-address form.
    if (options.all) return (callback as unknown as (error: null, addresses: typeof list) => void)(null, list)
    return callback(null, list[0]!.address, list[0]!.family)
  })
}

interface Target {
  readonly secure: boolean
  readonly hostname: string
  readonly port: string
  readonly path: string
  /** The host is an address literal, which no lookup sees. */
  readonly literal: boolean
}

const parseTarget = (text: string): Target | undefined => {
  try {
    const url = new URL(text)
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
    return {
      secure: url.protocol === "https:",
      hostname,
      port: url.port,
      path: url.pathname + url.search,
      literal: WebhookDestinations.isIpLiteral(hostname)
    }
  } catch {
    return undefined
  }
}

/**
 * What an attempt that got no answer stores. A refused connection, a reset, a
 * timeout and a failed TLS handshake read the same, so a tenant cannot tell an
 * open port of some host from a closed or filtered one by pointing a
 * subscription at it (decided: docs/decisions.md, "Limits and ranges"). What
 * DNS said, and a refused destination, are about the name, not its ports.
 */
const describeFailure = (error: Error & { code?: string }, timeoutMs: number): string => {
  if (error instanceof UnsafeDestination) return `Refused destination: ${error.message}`
  switch (error.code) {
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `The host name does not resolve (${error.code})`
    default:
      return `Could not connect, or no answer within ${timeoutMs} ms`
  }
}

/**
 * The webhook transport on `node:http`/`node:https`: keep-alive agents (one
 * pair per private-destination policy, so a pooled connection is never reused
 * under a laxer check), no redirects, a deadline on the whole exchange, and at
 * most `maxResponseBytes` of the answer kept.
 */
export const NodeWebhookTransport = (options: {
  /** Extra trusted certificate authorities (PEM), besides the system's, for receivers on a private PKI. */
  readonly extraCa?: string | undefined
} = {}): Layer.Layer<WebhookTransport.WebhookTransport> => Layer.effect(
  WebhookTransport.WebhookTransport,
  Effect.acquireRelease(
    Effect.sync(() => {
      const agentOptions = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64, scheduling: "lifo" as const }
      const tlsOptions = options.extraCa === undefined ? {} : { ca: [...tls.rootCertificates, options.extraCa] }
      const agents = {
        strict: { http: new http.Agent(agentOptions), https: new https.Agent({ ...agentOptions, ...tlsOptions }) },
        lax: { http: new http.Agent(agentOptions), https: new https.Agent({ ...agentOptions, ...tlsOptions }) }
      }
      return agents
    }),
    (agents) =>
      Effect.sync(() => {
        for (const pair of Object.values(agents)) {
          pair.http.destroy()
          pair.https.destroy()
        }
      })
  ).pipe(Effect.map((agents) => {
    const strictLookup = checkedLookup(false)
    const laxLookup = checkedLookup(true)
    // Subscriptions are few and their URLs fixed: parse each once.
    const targets = new Map<string, Target | undefined>()
    const targetOf = (url: string): Target | undefined => {
      if (targets.has(url)) return targets.get(url)
      if (targets.size >= 10_000) targets.clear()
      const target = parseTarget(url)
      targets.set(url, target)
      return target
    }
    return WebhookTransport.WebhookTransport.of({
      resolve: (hostname) =>
        Effect.tryPromise({
          try: () => dns.promises.lookup(hostname, { all: true }),
          catch: (e) => ({ _tag: "TransportFailure" as const, message: describeFailure(e as Error, 0) })
        }).pipe(Effect.map((list) => list.map((a) => a.address))),
      send: (request) =>
        Effect.callback<WebhookTransport.WebhookResponse, WebhookTransport.TransportFailure>((resumeOnce) => {
          let settled = false
          const resume = (effect: Effect.Effect<WebhookTransport.WebhookResponse, WebhookTransport.TransportFailure>) => {
            if (settled) return
            settled = true
            resumeOnce(effect)
          }
          const fail = (error: Error & { code?: string }) =>
            resume(Effect.fail({ _tag: "TransportFailure", message: describeFailure(error, request.timeoutMs) }))
          const target = targetOf(request.url)
          if (target === undefined) return fail(new Error("The subscription URL does not parse"))
          // An address literal never reaches the lookup: check it here.
          if (!request.allowPrivate && target.literal && !WebhookDestinations.isPublicAddress(target.hostname)) {
            return fail(new UnsafeDestination(`${target.hostname} is a loopback, private, link-local or multicast address`))
          }
          const pair = request.allowPrivate ? agents.lax : agents.strict
          const options: http.RequestOptions = {
            protocol: target.secure ? "https:" : "http:",
            hostname: target.hostname,
            port: target.port,
            path: target.path,
            method: "POST",
            agent: target.secure ? pair.https : pair.http,
            lookup: request.allowPrivate ? laxLookup : strictLookup,
            headers: { ...request.headers, "content-length": String(request.body.length) }
          }
          const req = (target.secure ? https : http).request(options, (res) => {
            const kept: Array<Buffer> = []
            let keptBytes = 0
            let seen = 0
            res.on("data", (chunk: Buffer) => {
              seen += chunk.length
              if (keptBytes < request.maxResponseBytes) {
                const part = chunk.subarray(0, request.maxResponseBytes - keptBytes)
                kept.push(part)
                keptBytes += part.length
              }
              if (seen > request.maxResponseBytes + DRAIN_LIMIT) res.destroy()
            })
            const done = () => {
              clearTimeout(timer)
              const retryAfter = res.headers["retry-after"]
              resume(Effect.succeed({
                status: res.statusCode ?? 0,
                retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
                body: Buffer.concat(kept).toString("utf8")
              }))
            }
            res.on("end", done)
            // A receiver that answers and then cuts the body short still answered.
            res.on("close", () => {
              if (!res.complete) done()
            })
            res.on("error", () => {})
          })
          const timer = setTimeout(() => {
            req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" }))
          }, request.timeoutMs)
          req.on("error", (error) => {
            clearTimeout(timer)
            fail(error)
          })
          req.end(request.body)
          return Effect.sync(() => {
            clearTimeout(timer)
            req.destroy()
          })
        })
    })
  }))
)
