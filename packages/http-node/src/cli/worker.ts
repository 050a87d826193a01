import { Effect, Layer } from "effect"
import { Command } from "effect/cli"
import { coreLive } from "../server/app.ts"
import { databaseChoiceFromEnv } from "../server/database.ts"
import { usageForwarderJob } from "../server/metering.ts"
import { webhookWorkerJob } from "../server/webhooks.ts"
import { CliProcess } from "./process.ts"
import { requireOperatorKey } from "./shared.ts"

export const worker = Command.make("worker", {}, () =>
  Effect.gen(function*() {
    const { env } = yield* CliProcess
    const database = databaseChoiceFromEnv(env)
    yield* requireOperatorKey(database)
    yield* Layer.launch(Layer.merge(webhookWorkerJob, usageForwarderJob).pipe(Layer.provide(coreLive(database, env))))
  })).pipe(
    Command.withDescription(
      "Send webhooks and forward usage to the payment processor without serving the API (PostgreSQL: run as many as you like; SIGTERM finishes the attempts in flight)"
    )
  )
