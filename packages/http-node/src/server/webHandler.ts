import { Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { databaseChoiceFromEnv, ServerConfig } from "../config/Configuration.ts"
import { AppRoutes, coreLive, OAuthHttpConfigLive } from "./app.ts"
import type { DatabaseChoice } from "./database.ts"
import { apiMiddleware } from "./middleware.ts"

/**
 * The same API as a Fetch handler (`(Request) => Promise<Response>`), for a
 * host that mounts it in its own server. Call `dispose` on shutdown.
 */
export const makeWebHandler = (options?: { readonly database?: DatabaseChoice | undefined }) =>
  HttpRouter.toWebHandler(
    AppRoutes.pipe(
      Layer.provide(HttpServer.layerServices),
      Layer.provide(OAuthHttpConfigLive.pipe(Layer.provide(ServerConfig.layer))),
      Layer.provideMerge(coreLive(options?.database ?? databaseChoiceFromEnv()))
    ),
    { middleware: apiMiddleware, disableLogger: true }
  )
