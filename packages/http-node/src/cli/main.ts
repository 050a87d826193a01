import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Console, Effect, Exit, Layer, Option, Runtime } from "effect"
import { Command, Flag } from "effect/cli"
import { Credentials, Errors, Migrations, ObligationMonitor, Pagination, Scopes, Tenancy } from "@opsplatform/core"
import { coreLive } from "../server/app.ts"
import { bootstrapDemo } from "../server/bootstrap.ts"
import { databaseChoiceFromEnv, layerSql } from "../server/database.ts"
import { LoggingLive } from "../server/logging.ts"
import { serverLayer } from "../server/serve.ts"
import { MISSING_KEY_MESSAGE, resolveOperatorKey, webhookWorkerJob, WebhookConfigError } from "../server/webhooks.ts"

/** JSON on stdout: the CLI's only output channel for results. */
const printJson = (value: unknown) => Console.log(JSON.stringify(value))

/** A domain failure ends the command with its code and message on stderr and exit status 1. */
const reportDomainErrors = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catch(self, (e) =>
    Errors.isDomainError(e)
      ? Effect.flatMap(
        Console.error(JSON.stringify({
          error: { code: e.code, message: e.message, ...(e._tag === "ValidationFailed" ? { details: e.details } : {}) }
        })),
        () => Effect.sync(() => {
          process.exitCode = 1
        })
      )
      : Effect.fail(e))

const withCore = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  self.pipe(reportDomainErrors, Effect.provide(coreLive(databaseChoiceFromEnv())))

/** Processes that send webhooks need the operator key: on PostgreSQL without it they refuse to start. */
const requireOperatorKey = (database: ReturnType<typeof databaseChoiceFromEnv>) =>
  Effect.try({
    try: () => {
      if (Option.isNone(resolveOperatorKey(database))) throw new WebhookConfigError(MISSING_KEY_MESSAGE)
    },
    catch: (e) => e as Error
  })

const serve = Command.make("serve", {
  port: Flag.Int("port").pipe(
    Flag.withDescription("Port to listen on (default: PORT or 8080)"),
    Flag.optional
  ),
  host: Flag.String("host").pipe(Flag.withDescription("Interface to bind (default: all)"), Flag.optional)
}, ({ host, port }) =>
  Effect.gen(function*() {
    const listenPort = Option.getOrElse(port, () => Number(process.env.PORT ?? 8080))
    const database = databaseChoiceFromEnv()
    yield* requireOperatorKey(database)
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
  })).pipe(Command.withDescription("Run the /v1 API server (migrations run first)"))

const worker = Command.make("worker", {}, () =>
  Effect.gen(function*() {
    const database = databaseChoiceFromEnv()
    yield* requireOperatorKey(database)
    yield* Layer.launch(webhookWorkerJob.pipe(Layer.provide(coreLive(database))))
  })).pipe(
    Command.withDescription(
      "Send webhooks without serving the API (PostgreSQL: run as many as you like; SIGTERM finishes the attempts in flight)"
    )
  )

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    const applied = yield* Migrations.migrate
    yield* printJson({ applied: applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`) })
  }).pipe(Effect.provide(layerSql(databaseChoiceFromEnv())))).pipe(
    Command.withDescription("Apply pending database migrations")
  )

const createOrg = Command.make("create-org", {
  name: Flag.String("name").pipe(Flag.withDescription("Organization name")),
  timeZone: Flag.String("time-zone").pipe(Flag.withDescription("IANA time zone (default UTC)"), Flag.optional)
}, ({ name, timeZone }) =>
  withCore(Effect.gen(function*() {
    const tenancy = yield* Tenancy.Tenancy
    const org = yield* tenancy.createOrganization({ name, time_zone: Option.getOrUndefined(timeZone) })
    yield* printJson({ id: org.id, name: org.name })
  }))).pipe(Command.withDescription("Create an organization (with its live and sandbox environments)"))

const cliKinds = { api: "api_key", personal: "personal", device: "device" } as const

const createKey = Command.make("create-key", {
  org: Flag.String("org").pipe(Flag.withDescription("Organization id")),
  env: Flag.Literals("env", ["live", "sandbox"]).pipe(Flag.withDescription("Environment")),
  kind: Flag.Literals("kind", ["api", "personal", "device"]).pipe(Flag.withDefault("api")),
  scopes: Flag.String("scopes").pipe(Flag.withDescription("Space-separated scopes")),
  name: Flag.String("name").pipe(Flag.withDescription("A label for the key"), Flag.optional),
  user: Flag.String("user").pipe(Flag.withDescription("Personal key: an existing member's user id"), Flag.optional),
  email: Flag.String("email").pipe(Flag.withDescription("Personal key: email of the member to create"), Flag.optional),
  device: Flag.String("device").pipe(Flag.withDescription("Device key: an existing device id"), Flag.optional)
}, (flags) =>
  withCore(Effect.gen(function*() {
    const tenancy = yield* Tenancy.Tenancy
    const credentials = yield* Credentials.Credentials
    const tenant = { organizationId: flags.org, environment: flags.env }
    yield* tenancy.getOrganization(flags.org)
    const { scopes, unknown } = Scopes.parseScopes(flags.scopes)
    if (unknown.length > 0) {
      return yield* Errors.ValidationFailed.field("scopes", `unknown scopes: ${unknown.join(", ")}`)
    }
    let userId = Option.getOrUndefined(flags.user)
    let deviceId = Option.getOrUndefined(flags.device)
    if (flags.kind === "personal" && userId === undefined) {
      const email = Option.getOrElse(flags.email, () => `member-${Date.now().toString(36)}@example.invalid`)
      const user = yield* tenancy.createUser({ email, name: email.split("@")[0]! })
      yield* tenancy.addMember(flags.org, user.id, "member")
      userId = user.id
    }
    if (flags.kind === "device" && deviceId === undefined) {
      deviceId = (yield* credentials.createDevice(tenant, "Wall display")).id
    }
    const issued = yield* credentials.issue(tenant, {
      kind: cliKinds[flags.kind],
      scopes,
      name: Option.getOrUndefined(flags.name),
      userId,
      deviceId
    })
    yield* printJson({
      id: issued.credential.id,
      token: issued.token,
      kind: flags.kind,
      environment: issued.credential.environment,
      scopes: issued.credential.scopes,
      ...(flags.kind === "personal" ? { user_id: userId } : {}),
      ...(flags.kind === "device" ? { device_id: deviceId } : {})
    })
  }))).pipe(Command.withDescription("Create an API key, personal token or device token; prints the token once"))

const revokeKey = Command.make("revoke-key", {
  id: Flag.String("id").pipe(Flag.withDescription("Credential id"))
}, ({ id }) =>
  withCore(Effect.gen(function*() {
    const credentials = yield* Credentials.Credentials
    const revoked = yield* credentials.revokeAnyTenant(id)
    yield* printJson({ id: revoked.id, revoked_at: revoked.revoked_at })
  }))).pipe(Command.withDescription("Revoke a credential"))

const listKeys = Command.make("list-keys", {
  org: Flag.String("org").pipe(Flag.withDescription("Organization id")),
  env: Flag.Literals("env", ["live", "sandbox"]).pipe(Flag.optional),
  all: Flag.Boolean("include-revoked").pipe(Flag.withDefault(false))
}, ({ all, env, org }) =>
  withCore(Effect.gen(function*() {
    const credentials = yield* Credentials.Credentials
    yield* (yield* Tenancy.Tenancy).getOrganization(org)
    const envs = Option.match(env, { onNone: () => ["live", "sandbox"] as const, onSome: (e) => [e] as const })
    const keys = []
    for (const environment of envs) {
      let page = yield* Pagination.pageRequest({ perPage: 100 })
      while (true) {
        const result = yield* credentials.list({ organizationId: org, environment }, { includeRevoked: all }, page)
        keys.push(...result.items)
        if (result.meta.nextCursor === null) break
        page = yield* Pagination.pageRequest({ perPage: 100, cursor: result.meta.nextCursor })
      }
    }
    yield* printJson(keys)
  }))).pipe(Command.withDescription("List an organization's credentials (never their tokens)"))

const setOrg = Command.make("set-org", {
  org: Flag.String("org").pipe(Flag.withDescription("Organization id")),
  name: Flag.String("name").pipe(Flag.withDescription("New name"), Flag.optional),
  timeZone: Flag.String("time-zone").pipe(
    Flag.withDescription("IANA time zone the organization's dates are read in, e.g. Europe/Bucharest"),
    Flag.optional
  ),
  escalationDelayDays: Flag.Int("escalation-delay-days").pipe(
    Flag.withDescription("Days an obligation stays overdue before it is escalated (0 to 365)"),
    Flag.optional
  )
}, ({ escalationDelayDays, name, org, timeZone }) =>
  withCore(Effect.gen(function*() {
    const tenancy = yield* Tenancy.Tenancy
    const updated = yield* tenancy.updateSettings(org, {
      name: Option.getOrUndefined(name),
      time_zone: Option.getOrUndefined(timeZone),
      escalation_delay_days: Option.getOrUndefined(escalationDelayDays)
    })
    yield* printJson(updated)
  }))).pipe(Command.withDescription("Change an organization's name, time zone or escalation delay; prints the organization"))

const admin = Command.make("admin").pipe(
  Command.withDescription("Operator commands"),
  Command.withSubcommands([createOrg, createKey, revokeKey, listKeys, setOrg])
)

const runObligations = Command.make("obligations", {
  org: Flag.String("org").pipe(Flag.withDescription("Only this organization (default: every one)"), Flag.optional)
}, ({ org }) =>
  withCore(Effect.gen(function*() {
    const monitor = yield* ObligationMonitor.ObligationMonitor
    yield* printJson(yield* monitor.run({ organizationId: Option.getOrUndefined(org) }))
  }))).pipe(
    Command.withDescription("One pass of the obligation monitor: send due reminders, overdue notices and escalations; prints what it sent")
  )

const jobs = Command.make("jobs").pipe(
  Command.withDescription("Run a background job once, outside the server"),
  Command.withSubcommands([Command.make("run").pipe(Command.withSubcommands([runObligations]))])
)

const opsplatform = Command.make("opsplatform").pipe(
  Command.withDescription("Operations Platform: the /v1 API server and its operator tools"),
  Command.withSubcommands([serve, worker, migrate, admin, jobs])
)

/** Anything else that stops a command: a JSON error on stderr, exit status 1, never on stdout. */
const reportFailure = (cause: Cause.Cause<unknown>) =>
  Cause.hasInterruptsOnly(cause)
    ? Effect.void
    : Effect.flatMap(
      Console.error(JSON.stringify({ error: { code: "failed", message: failureMessage(Cause.squash(cause)) } })),
      () => Effect.sync(() => {
        process.exitCode = 1
      })
    )

const failureMessage = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error
    ? String((error as { message: unknown }).message)
    : String(error)

Command.run(opsplatform, { version: "0.1.0" }).pipe(
  Effect.catchCause(reportFailure),
  Effect.provide(Layer.mergeAll(NodeServices.layer, LoggingLive())),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    // SIGTERM / SIGINT end `serve` and `worker` by interruption: a clean stop, exit status 0.
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)
