import { Effect } from "effect"
import { Events, Ids, Outbox, type Tenant, Transactor } from "@opsplatform/core"
import { configureTests } from "./config.ts"
import { call, type TestServer } from "./server.ts"

/**
 * Webhook settings for this test file, through the same variables an operator
 * sets: loopback receivers allowed, the test receiver's certificate trusted, a
 * schedule of `stepMs` steps instead of hours, quick polling.
 */
export const useTestWebhookSettings = (options: {
  readonly stepMs?: number
  readonly timeoutMs?: number
  readonly caFile?: string
} = {}) => {
  const step = options.stepMs ?? 300
  configureTests({
    OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE: "true",
    OPSPLATFORM_WEBHOOKS_SCHEDULE_MS: Array.from({ length: 7 }, () => String(step)).join(","),
    OPSPLATFORM_WEBHOOKS_POLL_MS: "100",
    OPSPLATFORM_WEBHOOKS_TIMEOUT_MS: String(options.timeoutMs ?? 2_000),
    ...(options.caFile === undefined ? {} : { OPSPLATFORM_WEBHOOKS_CA_FILE: options.caFile })
  })
}

/** A committed domain event, published the way every area does: inside a transaction, through the Outbox. */
export const publishEvent = (
  server: TestServer,
  tenant: Tenant.Tenant,
  type: "fleet_vehicle.created" | "fleet_vehicle.deleted" = "fleet_vehicle.created",
  options: { readonly rollBack?: boolean } = {}
): Promise<string> =>
  server.run(Effect.gen(function*() {
    const tx = yield* Transactor.Transactor
    const outbox = yield* Outbox.Outbox
    const ids = yield* Ids.Ids
    const vehicleId = yield* ids.uuid
    const eventId = Events.freshEventId(yield* ids.uuid)
    const publish = outbox.publish(tenant, Events.event(type, eventId, { id: vehicleId, plate: "B-101-OPS" }))
    if (options.rollBack) {
      yield* tx.withTransaction(Effect.andThen(publish, Effect.fail("rolled back" as const))).pipe(Effect.ignore)
    } else {
      yield* tx.withTransaction(publish)
    }
    return eventId
  }))

export const subscribe = async (
  server: TestServer,
  token: string,
  url: string,
  eventTypes: ReadonlyArray<string> = ["fleet_vehicle.created"]
): Promise<{ readonly id: string; readonly secret: string }> => {
  const res = await call(server, "POST", "/v1/webhooks", { token, body: { url, event_types: eventTypes } })
  if (res.status !== 201) throw new Error(`subscribing answered ${res.status}: ${res.text}`)
  return { id: res.json.data.id, secret: res.json.data.secret }
}

/** How often `eventually` reads the condition again. */
const READ_EVERY_MS = 25

/**
 * Waits until `predicate` holds for the value `read` returns: a condition
 * polled with a deadline. The worker runs in the background and writes an
 * outcome after the receiver has answered, so there is no event to await;
 * the deadline bounds the whole wait, a read that hangs included, and the
 * failure shows the last value read.
 */
export const eventually = async <A>(
  read: () => Promise<A>,
  predicate: (a: A) => boolean,
  timeoutMs = 20_000
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last: { readonly value: A } | undefined
  const expired = () => {
    const shown = last === undefined ? "none read" : JSON.stringify(last.value)?.slice(0, 2000)
    return new Error(`condition not met within ${timeoutMs} ms; last value: ${shown}`)
  }
  /** `promise`, or the deadline's failure if it comes first. */
  const beforeDeadline = <B>(promise: Promise<B>): Promise<B> => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadlineReached = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(expired()), Math.max(0, deadline - Date.now()))
    })
    return Promise.race([promise, deadlineReached]).finally(() => clearTimeout(timer))
  }
  for (;;) {
    last = { value: await beforeDeadline(read()) }
    if (predicate(last.value)) return last.value
    if (Date.now() >= deadline) throw expired()
    await new Promise((r) => setTimeout(r, Math.min(READ_EVERY_MS, deadline - Date.now())))
  }
}

/** Every delivery of a subscription, newest first, through the API's pages. */
export const deliveriesOf = async (server: TestServer, token: string, subscriptionId: string) => {
  const all: Array<any> = []
  let query = "perPage=100"
  for (;;) {
    const res = await call(server, "GET", `/v1/webhooks/${subscriptionId}/deliveries?${query}`, { token })
    if (res.status !== 200) throw new Error(`listing deliveries answered ${res.status}: ${res.text}`)
    all.push(...res.json.data)
    if (res.json.meta.nextCursor === null) return all
    query = `perPage=100&cursor=${res.json.meta.nextCursor}`
  }
}
