import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { HttpRouter } from "effect/http"
import { createServer } from "node:http"
import { AppRoutes, coreLive } from "./app.ts"
import type { DatabaseChoice } from "./database.ts"
import { BackgroundJobs } from "./background.ts"
import { apiMiddleware } from "./middleware.ts"

export interface ServeOptions {
  readonly port: number
  readonly host?: string | undefined
  readonly database: DatabaseChoice
  /** Run the background jobs (webhook worker, monitors) in this process; default true. */
  readonly background?: boolean | undefined
}

/**
 * The HTTP server on Node with everything it needs. Closing the layer's scope
 * (SIGTERM under `NodeRuntime.runMain`) stops accepting connections and lets
 * in-flight requests finish (up to 20 s) before the database closes.
 */
export const serverLayer = (options: ServeOptions) =>
  Layer.merge(
    HttpRouter.serve(AppRoutes, { middleware: apiMiddleware, disableLogger: true, disableListenLog: true }),
    BackgroundJobs(options.background ?? true)
  ).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => createServer(), {
      port: options.port,
      ...(options.host ? { host: options.host } : {}),
      gracefulShutdownTimeout: "20 seconds"
    })),
    Layer.provideMerge(coreLive(options.database))
  )

