import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { HttpRouter } from "effect/http"
import { randomBytes } from "node:crypto"
import { createServer, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import { Secrets } from "@opsplatform/core"
import { defaultCode } from "../api/errors.ts"
import { ServerConfig } from "../config/Configuration.ts"
import { AppRoutes, coreLive, OAuthHttpConfigLive } from "./app.ts"
import type { DatabaseChoice } from "./database.ts"
import { BackgroundJobs } from "./background.ts"
import { apiMiddleware } from "./middleware.ts"
import { MetricsListenerLive, withObservability } from "./observability.ts"

export interface ServeOptions {
  readonly port: number
  readonly host?: string | undefined
  readonly database: DatabaseChoice
  /** Run the background jobs (webhook worker, monitors) in this process; default true. */
  readonly background?: boolean | undefined
}

/**
 * Requests Node's HTTP parser refuses before the app sees them (headers or a
 * URL over its limit: 431; malformed HTTP: 400; a request too slow: 408) are
 * answered in the envelope with an X-Request-Id like every other answer,
 * instead of Node's bare status line.
 */
const refuseUnparsed = (error: Error & { readonly code?: string }, socket: Duplex) => {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  const status = error.code === "HPE_HEADER_OVERFLOW"
    ? 431
    : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
    ? 408
    : 400
  const requestId = `req_${Secrets.encodeHex(randomBytes(12))}`
  const message = status === 431
    ? "The request line or headers are too large (URLs and headers are limited to 16 KiB together)"
    : status === 408
    ? "The request took too long to arrive"
    : "The request is not well-formed HTTP"
  const body = JSON.stringify({ data: null, error: { code: defaultCode(status), message, requestId } })
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`
  )
}

/**
 * The HTTP server on Node with everything it needs. Closing the layer's scope
 * (SIGTERM under `NodeRuntime.runMain`) stops accepting connections and lets
 * in-flight requests finish (up to 20 s) before the database closes. Metrics
 * and traces as configured (`withObservability`).
 */
export const serverLayer = (options: ServeOptions) =>
  Layer.mergeAll(
    HttpRouter.serve(AppRoutes, { middleware: apiMiddleware, disableLogger: true, disableListenLog: true }),
    BackgroundJobs(options.background ?? true),
    MetricsListenerLive
  ).pipe(
    Layer.provide(OAuthHttpConfigLive),
    Layer.provideMerge(ServerConfig.layer),
    Layer.provideMerge(NodeHttpServer.layer(() => createServer().on("clientError", refuseUnparsed), {
      port: options.port,
      ...(options.host ? { host: options.host } : {}),
      gracefulShutdownTimeout: "20 seconds"
    })),
    Layer.provideMerge(coreLive(options.database)),
    withObservability
  )

