import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { Credentials, Devices, Errors, OAuthApps, OAuthModel, Pagination, Schemas, Scopes, Tenancy, TenancyRepo } from "@opsplatform/core"
import { CliProcess } from "./process.ts"
import { printJson, withCore } from "./shared.ts"

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

const createOrg = Command.make("create-org", {
  name: Flag.String("name").pipe(Flag.withDescription("Organization name")),
  timeZone: Flag.String("time-zone").pipe(Flag.withDescription("IANA time zone (default UTC)"), Flag.optional)
}, ({ name, timeZone }) =>
  withCore(Effect.gen(function*() {
    const tenancy = yield* Tenancy.Tenancy
    const org = yield* tenancy.createOrganization({
      name,
      ...(Option.isSome(timeZone) ? { time_zone: timeZone.value } : {})
    })
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
    const scopes = yield* scopesFlag(flags.scopes)
    let userId = Option.getOrUndefined(flags.user)
    let deviceId = Option.getOrUndefined(flags.device)
    if (flags.kind === "personal" && userId === undefined) {
      const email = Option.getOrElse(flags.email, () => `member-${Date.now().toString(36)}@example.invalid`)
      const user = yield* tenancy.createUser({ email, name: email.split("@")[0]! })
      yield* tenancy.addMember(flags.org, user.id, "member")
      userId = user.id
    }
    if (flags.kind === "device" && deviceId === undefined) {
      // A new display: registered with its first token, the one printed.
      const scopesOfDevice = scopes.filter((s): s is "display:read" | "display:assistant" => Scopes.displayScopes.includes(s))
      if (scopesOfDevice.length < scopes.length || scopesOfDevice.length === 0) {
        return yield* Errors.ValidationFailed.field("scopes", `a device token may only carry ${Scopes.displayScopes.join(", ")}`)
      }
      const created = yield* (yield* Devices.Devices).create(tenant, { name: "Wall display", scopes: scopesOfDevice })
      return yield* printJson({
        id: created.credential_id,
        token: created.token,
        kind: flags.kind,
        environment: flags.env,
        scopes: created.scopes,
        device_id: created.device.id
      })
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
        const result = yield* credentials.list({ organizationId: org, environment }, all ? {} : { revoked: false }, page)
        keys.push(...result.items)
        if (result.meta.nextCursor === null) break
        page = yield* Pagination.pageRequest({ perPage: 100, cursor: result.meta.nextCursor })
      }
    }
    yield* printJson(keys)
  }))).pipe(Command.withDescription("List an organization's credentials (never their tokens)"))


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

const verifyApp = Command.make("verify-app", {
  clientId: Flag.String("client-id").pipe(Flag.withDescription("The app's client_id")),
  revoke: Flag.Boolean("revoke").pipe(Flag.withDescription("Take the verification back"), Flag.withDefault(false))
}, (flags) =>
  withCore(Effect.gen(function*() {
    const apps = yield* OAuthApps.OAuthApps
    yield* printJson(yield* apps.setVerified(flags.clientId, !flags.revoke))
  }))).pipe(Command.withDescription(
    "Mark an OAuth app verified: its authorize requests that fail before the member acts go back to its redirect URI " +
      "instead of the server's error page (docs/decisions.md, \"OAuth 2.0\")"
  ))

/** The password from the flag, or else the whole of stdin without its final line break. */
const passwordInput = (flag: Option.Option<string>) =>
  Option.match(flag, {
    onSome: Effect.succeed,
    onNone: () =>
      Effect.gen(function*() {
        return (yield* CliProcess).readStdin().replace(/\r?\n$/, "")
      })
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
  ),
  vatNumber: Flag.String("vat-number").pipe(
    Flag.withDescription("The organization's Romanian CUI (with or without RO), by which access grants name it"),
    Flag.optional
  )
}, ({ escalationDelayDays, name, org, timeZone, vatNumber }) =>
  withCore(Effect.gen(function*() {
    const tenancy = yield* Tenancy.Tenancy
    const updated = yield* tenancy.updateSettings(org, {
      ...(Option.isSome(name) ? { name: name.value } : {}),
      ...(Option.isSome(timeZone) ? { time_zone: timeZone.value } : {}),
      ...(Option.isSome(escalationDelayDays) ? { escalation_delay_days: escalationDelayDays.value } : {}),
      ...(Option.isSome(vatNumber) ? { vat_number: vatNumber.value } : {})
    })
    yield* printJson(updated)
  }))).pipe(Command.withDescription("Change an organization's name, time zone, escalation delay or VAT number; prints the organization"))

export const admin = Command.make("admin").pipe(
  Command.withDescription("Operator commands"),
  Command.withSubcommands([createOrg, createKey, revokeKey, listKeys, setOrg, createApp, installApp, verifyApp, setPassword])
)

