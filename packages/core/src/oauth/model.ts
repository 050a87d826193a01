import { Schema } from "effect"
import { IsoDateTime, NonBlankString } from "../shared/schemas.ts"
import { Environment } from "../shared/tenant.ts"

export const AppType = Schema.Literals(["public", "confidential"]).annotate({
  description: "`confidential`: the app keeps a client secret on a server; `public`: it cannot (browser or native app)"
})
export type AppType = typeof AppType.Type

export const GrantType = Schema.Literals(["authorization_code", "refresh_token", "client_credentials"])
export type GrantType = typeof GrantType.Type
export const grantTypes: ReadonlyArray<GrantType> = ["authorization_code", "refresh_token", "client_credentials"]

/** An OAuth app as its owner sees it: never the secret, only its first characters. */
export const OAuthApp = Schema.Struct({
  id: Schema.String,
  client_id: Schema.String,
  name: Schema.String,
  type: AppType,
  redirect_uris: Schema.Array(Schema.String),
  scopes: Schema.Array(Schema.String),
  grant_types: Schema.Array(GrantType),
  secret_prefix: Schema.NullOr(Schema.String).annotate({ description: "First characters of the client secret, for recognition" }),
  secret_rotated_at: Schema.NullOr(IsoDateTime),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "OAuthApp" })
export type OAuthApp = typeof OAuthApp.Type

/** A registration or a rotation: the client secret appears here once and never again. */
export const OAuthAppWithSecret = Schema.Struct({
  ...OAuthApp.fields,
  client_secret: Schema.NullOr(Schema.String).annotate({
    description: "The client secret of a confidential app, shown once; null for public apps"
  })
}).annotate({ identifier: "OAuthAppWithSecret" })
export type OAuthAppWithSecret = typeof OAuthAppWithSecret.Type

const RedirectUris = Schema.Array(Schema.String.check(Schema.isMaxLength(2000))).check(Schema.isMaxLength(10)).annotate({
  description: "Exact redirect URIs: https, or http on a loopback IP literal (127.0.0.1 or [::1]; any port is accepted there at authorization time)"
})
const ScopeList = Schema.Array(Schema.String).annotate({ description: "Scopes from the catalog the app may ever ask for" })
const GrantTypeList = Schema.Array(GrantType).annotate({
  description: "Grant types the app may use; client_credentials needs a confidential app, refresh_token needs authorization_code"
})

export const AppCreate = Schema.Struct({
  name: NonBlankString(200),
  type: AppType,
  redirect_uris: RedirectUris,
  scopes: ScopeList,
  grant_types: GrantTypeList
}).annotate({ identifier: "OAuthAppCreate" })
export type AppCreate = typeof AppCreate.Type

/** The type of an app is fixed: a public app never gets a secret, a confidential one never loses it. */
export const AppUpdate = Schema.Struct({
  name: Schema.optionalKey(NonBlankString(200)),
  redirect_uris: Schema.optionalKey(RedirectUris),
  scopes: Schema.optionalKey(ScopeList),
  grant_types: Schema.optionalKey(GrantTypeList)
}).annotate({ identifier: "OAuthAppUpdate" })
export type AppUpdate = typeof AppUpdate.Type

/** An app installed in an organization environment, with what `client_credentials` may reach there. */
export const Installation = Schema.Struct({
  id: Schema.String,
  app_id: Schema.String,
  client_id: Schema.String,
  app_name: Schema.String,
  environment: Environment,
  scopes: Schema.Array(Schema.String),
  created_at: IsoDateTime
}).annotate({ identifier: "OAuthInstallation" })
export type Installation = typeof Installation.Type

export const InstallationCreate = Schema.Struct({
  client_id: Schema.String.check(Schema.isMaxLength(100)),
  scopes: ScopeList
}).annotate({ identifier: "OAuthInstallationCreate" })
export type InstallationCreate = typeof InstallationCreate.Type

/** The stored app: its owner (null for an operator's app) and the SHA-256 of its secret. */
export interface StoredApp {
  readonly id: string
  readonly client_id: string
  readonly organization_id: string | null
  readonly environment: Environment | null
  readonly name: string
  readonly type: AppType
  readonly redirect_uris: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
  readonly grant_types: ReadonlyArray<GrantType>
  readonly secret_hash: string | null
  readonly secret_prefix: string | null
  readonly secret_rotated_at: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface StoredInstallation {
  readonly id: string
  readonly app_id: string
  readonly organization_id: string
  readonly environment: Environment
  readonly scopes: ReadonlyArray<string>
  readonly created_at: string
}

export type GrantKind = "authorization_code" | "client_credentials"

/** One authorization: what a member consented to, or one client_credentials issuance. Its tokens die with it. */
export interface Grant {
  readonly id: string
  readonly app_id: string
  readonly kind: GrantKind
  readonly organization_id: string
  readonly environment: Environment
  readonly user_id: string | null
  readonly installation_id: string | null
  readonly scopes: ReadonlyArray<string>
  readonly created_at: string
  /** No refresh token of the grant lives past this instant (absolute lifetime). */
  readonly refresh_until: string | null
  readonly revoked_at: string | null
}

export interface AuthorizationCode {
  readonly id: string
  readonly code_hash: string
  readonly app_id: string
  /** The grant the code turns into when redeemed (created then), so a replay can revoke it. */
  readonly grant_id: string
  readonly organization_id: string
  readonly environment: Environment
  readonly user_id: string
  readonly redirect_uri: string
  readonly code_challenge: string
  readonly scopes: ReadonlyArray<string>
  readonly created_at: string
  readonly expires_at: string
  readonly used_at: string | null
}

/** A link of a grant's refresh chain; `parent_id` is the token it replaced. */
export interface RefreshToken {
  readonly id: string
  readonly token_hash: string
  readonly grant_id: string
  readonly app_id: string
  readonly parent_id: string | null
  readonly created_at: string
  readonly expires_at: string
  readonly used_at: string | null
  readonly revoked_at: string | null
}

/** A browser on the consent page: anonymous until its member signs in. */
export interface BrowserSession {
  readonly id: string
  readonly token_hash: string
  readonly user_id: string | null
  readonly created_at: string
  readonly expires_at: string
}

/** An authorize request kept server-side while its browser signs in and decides. */
export interface PendingAuthorization {
  readonly id: string
  readonly handle_hash: string
  readonly session_id: string
  readonly app_id: string
  readonly redirect_uri: string
  readonly scopes: ReadonlyArray<string>
  readonly state: string | null
  readonly code_challenge: string
  readonly created_at: string
  readonly expires_at: string
}
