import { Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { AppRoutes, coreLive } from "./app.ts"
import { type DatabaseChoice, databaseChoiceFromEnv } from "./database.ts"
import { apiMiddleware } from "./middleware.ts"

/**
 * The same API as a Fetch handler (`(Request) => Promise<Response>`), for a
 * host that mounts it in its own server. Call `dispose` on shutdown.
 */
export const makeWebHandler = (options?: { readonly database?: DatabaseChoice | undefined }) =>
  HttpRouter.toWebHandler(
    AppRoutes.pipe(
      Layer.provide(HttpServer.layerServices),
      Layer.provideMerge(coreLive(options?.database ?? databaseChoiceFromEnv()))
    ),
    { middleware: apiMiddleware, disableLogger: true }
  )
