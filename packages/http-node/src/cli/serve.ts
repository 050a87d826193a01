import { Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { bootstrapDemo } from "../server/bootstrap.ts"
import { CoreConfig, ServerConfig } from "../config/Configuration.ts"
import { serverLayer } from "../server/serve.ts"
import { printJson, requireOperatorKey } from "./shared.ts"

export const serve = Command.make("serve", {
  port: Flag.Int("port").pipe(
    Flag.withDescription("Port to listen on (default: PORT or 8080)"),
    Flag.optional
  ),
  host: Flag.String("host").pipe(Flag.withDescription("Interface to bind (default: all)"), Flag.optional)
}, ({ host, port }) =>
  Effect.gen(function*() {
    const configured = yield* ServerConfig
    const listenPort = Option.getOrElse(port, () => configured.port)
    const { database, secretKey } = yield* CoreConfig
    yield* requireOperatorKey(database, secretKey)
    yield* Layer.launch(
      Layer.effectDiscard(Effect.gen(function*() {
        const demo = yield* bootstrapDemo
        if (demo !== undefined) {
          yield* printJson({ demo })
          yield* Effect.logInfo("created a demo organization; its API keys are on stdout")
        }
        yield* Effect.logInfo("listening").pipe(Effect.annotateLogs({
          url: `http://${Option.getOrElse(host, () => "localhost")}:${listenPort}`,
          database: database._tag === "Postgres" ? "postgresql" : `embedded (${database._tag === "Embedded" ? database.dataDir : "memory"})`
        }))
      })).pipe(Layer.provideMerge(serverLayer({ port: listenPort, host: Option.getOrUndefined(host), database })))
    )
  }).pipe(Effect.provide(Layer.merge(CoreConfig.layer, ServerConfig.layer)))).pipe(Command.withDescription("Run the /v1 API server (migrations run first)"))
