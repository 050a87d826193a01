import { Schema, Struct } from "effect"
import { isMaxChars, IsoDateTime, NonBlankString, Uuid } from "../shared/schemas.ts"
import { Environment } from "../shared/tenant.ts"

export const OAuthAppId = Uuid.pipe(Schema.brand("OAuthAppId"))
export type OAuthAppId = typeof OAuthAppId.Type

export const InstallationId = Uuid.pipe(Schema.brand("InstallationId"))
export type InstallationId = typeof InstallationId.Type

export const AppType = Schema.Literals(["public", "confidential"]).annotate({
  description: "`confidential`: the app keeps a client secret on a server; `public`: it cannot (browser or native app)"
})
export type AppType = typeof AppType.Type

export const GrantType = Schema.Literals(["authorization_code", "refresh_token", "client_credentials"])
export type GrantType = typeof GrantType.Type
export const grantTypes: ReadonlyArray<GrantType> = ["authorization_code", "refresh_token", "client_credentials"]

/** `app_` + 128 random bits in hex; anything longer is not a client id. */
const ClientId = Schema.String.check(isMaxChars(100))

const redirectUrisDescription =
  "Exact redirect URIs: https, or http on a loopback IP literal (127.0.0.1 or [::1]; any port is accepted there at authorization time)"

/** An OAuth app as its owner sees it: never the secret, only its first characters. */
export const OAuthApp = Schema.Struct({
  id: OAuthAppId,
  client_id: ClientId,
  name: NonBlankString(200),
  type: AppType,
  redirect_uris: Schema.Array(Schema.String).annotate({ description: redirectUrisDescription }),
  scopes: Schema.Array(Schema.String).annotate({ description: "Scopes from the catalog the app may ever ask for" }),
  grant_types: Schema.Array(GrantType).annotate({
    description: "Grant types the app may use; client_credentials needs a confidential app, refresh_token needs authorization_code"
  }),
  secret_prefix: Schema.NullOr(Schema.String).annotate({ description: "First characters of the client secret, for recognition" }),
  secret_rotated_at: Schema.NullOr(IsoDateTime),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "OAuthApp" })
export type OAuthApp = typeof OAuthApp.Type

/** A registration or a rotation: the client secret appears here once and never again. */
export const OAuthAppWithSecret = OAuthApp.mapFields(Struct.assign({
  client_secret: Schema.NullOr(Schema.String).annotate({
    description: "The client secret of a confidential app, shown once; null for public apps"
  })
})).annotate({ identifier: "OAuthAppWithSecret" })
export type OAuthAppWithSecret = typeof OAuthAppWithSecret.Type

/**
 * The stored app: the resource and the SHA-256 of its secret. Its owner (an
 * organization environment, or none for an operator's app) is the tenant it is
 * stored under, not a field.
 */
export const StoredApp = OAuthApp.mapFields(Struct.assign({
  secret_hash: Schema.NullOr(Schema.String),
  /** When the operator verified the app (`opsplatform admin verify-app`); null: not verified. */
  verified_at: Schema.NullOr(IsoDateTime)
}))
export type StoredApp = typeof StoredApp.Type

/**
 * What a caller registers. The limits on redirect URIs bind what is sent through
 * the API; an operator's registration from the CLI is not held to them, so the
 * resource does not promise them.
 */
export const AppCreate = OAuthApp.mapFields(Struct.pick(["name", "type", "redirect_uris", "scopes", "grant_types"])).mapFields(
  Struct.assign({
    redirect_uris: Schema.Array(Schema.String.check(isMaxChars(2000))).check(Schema.isMaxLength(10)).annotate({
      description: redirectUrisDescription
    })
  })
).annotate({ identifier: "OAuthAppCreate" })
export type AppCreate = typeof AppCreate.Type

/** The type of an app is fixed: a public app never gets a secret, a confidential one never loses it. */
export const AppUpdate = AppCreate.mapFields(Struct.omit(["type"])).mapFields(Struct.map(Schema.optionalKey)).annotate({
  identifier: "OAuthAppUpdate"
})
export type AppUpdate = typeof AppUpdate.Type

/** A stored installation: an app installed in an organization environment, with what `client_credentials` may reach there. */
export const StoredInstallation = Schema.Struct({
  id: InstallationId,
  app_id: OAuthAppId,
  organization_id: Uuid,
  environment: Environment,
  scopes: Schema.Array(Schema.String).annotate({
    description: "Scopes client_credentials may use in this organization environment, within the app's scopes"
  }),
  created_at: IsoDateTime
})
export type StoredInstallation = typeof StoredInstallation.Type

/** An installation as its organization sees it: the app's client id and name instead of the organization. */
export const Installation = StoredInstallation.mapFields(({ app_id, id, organization_id: _, ...rest }) => ({
  id,
  app_id,
  client_id: ClientId,
  app_name: OAuthApp.fields.name,
  ...rest
})).annotate({ identifier: "OAuthInstallation" })
export type Installation = typeof Installation.Type

export const InstallationCreate = Installation.mapFields(Struct.pick(["client_id", "scopes"])).annotate({
  identifier: "OAuthInstallationCreate"
})
export type InstallationCreate = typeof InstallationCreate.Type

export const GrantKind = Schema.Literals(["authorization_code", "client_credentials"])
export type GrantKind = typeof GrantKind.Type

/** One authorization: what a member consented to, or one installation's client_credentials. Its tokens die with it. */
export const Grant = Schema.Struct({
  /** An installation's grant has the installation's id. */
  id: Uuid,
  app_id: OAuthAppId,
  kind: GrantKind,
  organization_id: Uuid,
  environment: Environment,
  user_id: Schema.NullOr(Uuid),
  installation_id: Schema.NullOr(InstallationId),
  scopes: Schema.Array(Schema.String),
  created_at: IsoDateTime,
  /** No refresh token of the grant lives past this instant (absolute lifetime). */
  refresh_until: Schema.NullOr(IsoDateTime),
  revoked_at: Schema.NullOr(IsoDateTime)
})
export type Grant = typeof Grant.Type

export const AuthorizationCode = Schema.Struct({
  id: Uuid,
  code_hash: Schema.String,
  app_id: OAuthAppId,
  /** The grant the code turns into when redeemed (created then), so a replay can revoke it. */
  grant_id: Uuid,
  organization_id: Uuid,
  environment: Environment,
  user_id: Uuid,
  redirect_uri: Schema.String,
  code_challenge: Schema.String,
  scopes: Schema.Array(Schema.String),
  created_at: IsoDateTime,
  expires_at: IsoDateTime,
  used_at: Schema.NullOr(IsoDateTime)
})
export type AuthorizationCode = typeof AuthorizationCode.Type

/** A link of a grant's refresh chain; `parent_id` is the token it replaced. */
export const RefreshToken = Schema.Struct({
  id: Uuid,
  token_hash: Schema.String,
  grant_id: Uuid,
  app_id: OAuthAppId,
  parent_id: Schema.NullOr(Uuid),
  created_at: IsoDateTime,
  expires_at: IsoDateTime,
  used_at: Schema.NullOr(IsoDateTime),
  revoked_at: Schema.NullOr(IsoDateTime)
})
export type RefreshToken = typeof RefreshToken.Type

/** A browser on the consent page: anonymous until its member signs in. */
export const BrowserSession = Schema.Struct({
  id: Uuid,
  token_hash: Schema.String,
  user_id: Schema.NullOr(Uuid),
  created_at: IsoDateTime,
  expires_at: IsoDateTime
})
export type BrowserSession = typeof BrowserSession.Type

/** An authorize request kept server-side while its browser signs in and decides. */
export const PendingAuthorization = Schema.Struct({
  id: Uuid,
  handle_hash: Schema.String,
  session_id: Uuid,
  app_id: OAuthAppId,
  redirect_uri: Schema.String,
  scopes: Schema.Array(Schema.String),
  state: Schema.NullOr(Schema.String),
  code_challenge: Schema.String,
  created_at: IsoDateTime,
  expires_at: IsoDateTime
})
export type PendingAuthorization = typeof PendingAuthorization.Type
