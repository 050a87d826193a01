import { Effect, Layer } from "effect"
import { Command } from "effect/cli"
import { CoreConfig } from "../config/Configuration.ts"
import { coreLive } from "../server/app.ts"
import { usageForwarderJob } from "../server/metering.ts"
import { MetricsListenerLive, withObservability } from "../server/observability.ts"
import { webhookWorkerJob } from "../server/webhooks.ts"
import { requireOperatorKey } from "./shared.ts"

export const worker = Command.make("worker", {}, () =>
  Effect.gen(function*() {
    const { database, secretKey } = yield* CoreConfig
    yield* requireOperatorKey(database, secretKey)
    yield* Layer.launch(
      Layer.mergeAll(webhookWorkerJob, usageForwarderJob, MetricsListenerLive).pipe(
        Layer.provide(coreLive(database)),
        withObservability
      )
    )
  }).pipe(Effect.provide(CoreConfig.layer))).pipe(
    Command.withDescription(
      "Send webhooks and forward usage to the payment processor without serving the API (PostgreSQL: run as many as you like; SIGTERM finishes the attempts in flight)"
    )
  )
