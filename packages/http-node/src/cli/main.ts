import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Console, Effect, Exit, Layer, Option, Runtime } from "effect"
import { Command, Flag } from "effect/cli"
import {
  Credentials,
  Errors,
  Migrations,
  OAuthApps,
  OAuthModel,
  ObligationMonitor,
  Pagination,
  Schemas,
  Scopes,
  Tenancy,
  TenancyRepo
} from "@opsplatform/core"
import * as fs from "node:fs"
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

/** An existing organization by id; anything that is not a UUID is unknown too. */
const existingOrganization = (id: string) =>
  Schemas.isUuid(id)
    ? Effect.flatMap(Tenancy.Tenancy, (tenancy) => tenancy.getOrganization(id))
    : Effect.fail(new Errors.NotFound({ resource: "organization", id }))

/** Space-separated scopes from a flag; unknown names are a validation failure naming them. */
const scopesFlag = (value: string) => {
  const { scopes, unknown } = Scopes.parseScopes(value)
  return unknown.length > 0
    ? Effect.fail(Errors.ValidationFailed.field("scopes", `unknown scopes: ${unknown.join(", ")}`))
    : Effect.succeed(scopes)
}

const createApp = Command.make("create-app", {
  name: Flag.String("name").pipe(Flag.withDescription("The app's name, shown on the consent page")),
  type: Flag.Literals("type", ["public", "confidential"]).pipe(Flag.withDescription("confidential: keeps a client secret")),
  redirectUris: Flag.String("redirect-uri").pipe(
    Flag.withDescription("A redirect URI (repeatable): https, or http on 127.0.0.1 / [::1]"),
    Flag.atLeast(0)
  ),
  scopes: Flag.String("scopes").pipe(Flag.withDescription("Space-separated scopes the app may ask for")),
  grants: Flag.String("grants").pipe(
    Flag.withDescription("Space-separated grant types: authorization_code refresh_token client_credentials")
  ),
  org: Flag.String("org").pipe(Flag.withDescription("Owner organization id (default: an operator's app)"), Flag.optional),
  env: Flag.Literals("env", ["live", "sandbox"]).pipe(Flag.withDescription("Owner environment, with --org"), Flag.optional)
}, (flags) =>
  withCore(Effect.gen(function*() {
    const apps = yield* OAuthApps.OAuthApps
    const org = Option.getOrUndefined(flags.org)
    const env = Option.getOrUndefined(flags.env)
    if ((org === undefined) !== (env === undefined)) {
      return yield* Errors.ValidationFailed.field(org === undefined ? "org" : "env", "--org and --env go together")
    }
    if (org !== undefined) yield* existingOrganization(org)
    const grants = flags.grants.split(/\s+/).filter((g) => g !== "")
    const unknownGrants = grants.filter((g) => !OAuthModel.grantTypes.includes(g as OAuthModel.GrantType))
    if (unknownGrants.length > 0) {
      return yield* Errors.ValidationFailed.field("grants", `unknown grant types: ${unknownGrants.join(", ")}`)
    }
    const registered = yield* apps.register(
      org === undefined ? null : { organizationId: org, environment: env! },
      {
        name: flags.name,
        type: flags.type,
        redirect_uris: flags.redirectUris,
        scopes: yield* scopesFlag(flags.scopes),
        grant_types: grants as Array<OAuthModel.GrantType>
      }
    )
    const { client_secret, ...app } = registered
    yield* printJson({
      ...app,
      ...(client_secret === null ? {} : { client_secret }),
      organization_id: org ?? null,
      environment: env ?? null
    })
  }))).pipe(Command.withDescription("Register an OAuth app; prints its client_id and, once, its client secret"))

const installApp = Command.make("install-app", {
  clientId: Flag.String("client-id").pipe(Flag.withDescription("The app's client_id")),
  org: Flag.String("org").pipe(Flag.withDescription("Organization id")),
  env: Flag.Literals("env", ["live", "sandbox"]).pipe(Flag.withDescription("Environment")),
  scopes: Flag.String("scopes").pipe(Flag.withDescription("Space-separated scopes the installation grants"))
}, (flags) =>
  withCore(Effect.gen(function*() {
    const apps = yield* OAuthApps.OAuthApps
    yield* existingOrganization(flags.org)
    const installation = yield* apps.install(
      { organizationId: flags.org, environment: flags.env },
      { client_id: flags.clientId, scopes: yield* scopesFlag(flags.scopes) }
    )
    yield* printJson({ ...installation, organization_id: flags.org })
  }))).pipe(Command.withDescription("Install an OAuth app in an organization environment (what client_credentials reaches)"))

/** The password from the flag, or else the whole of stdin without its final line break. */
const passwordInput = (flag: Option.Option<string>) =>
  Option.match(flag, {
    onSome: Effect.succeed,
    onNone: () => Effect.sync(() => fs.readFileSync(0, "utf8").replace(/\r?\n$/, ""))
  })

const setPassword = Command.make("set-password", {
  email: Flag.String("email").pipe(Flag.withDescription("The member's email")),
  password: Flag.String("password").pipe(
    Flag.withDescription("The new password (8 to 200 characters); read from stdin when omitted"),
    Flag.optional
  )
}, (flags) =>
  withCore(Effect.gen(function*() {
    const user = yield* (yield* TenancyRepo.TenancyRepo).findUserByEmail(flags.email)
    if (Option.isNone(user)) return yield* new Errors.NotFound({ resource: "user", id: flags.email })
    yield* (yield* Tenancy.Tenancy).setPassword(user.value.id, yield* passwordInput(flags.password))
    yield* printJson({ user_id: user.value.id, email: user.value.email, password_set: true })
  }))).pipe(Command.withDescription("Set a member's password for the OAuth sign-in page (stored as an Argon2id hash)"))

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
  Command.withSubcommands([createOrg, createKey, revokeKey, listKeys, setOrg, createApp, installApp, setPassword])
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
