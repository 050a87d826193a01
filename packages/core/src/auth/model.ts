import { Schema } from "effect"
import { IsoDateTime } from "../shared/schemas.ts"
import { Environment } from "../shared/tenant.ts"
import type { Scope } from "./scopes.ts"

export const CredentialKind = Schema.Literals(["api_key", "personal", "device", "oauth"])
export type CredentialKind = typeof CredentialKind.Type

/** Token prefixes by credential kind (DESIGN: Credentials). */
export const tokenPrefixes = {
  api_key: "svc_key_",
  personal: "svc_pt_",
  device: "svc_dt_",
  oauth: "svc_at_"
} as const satisfies Record<CredentialKind, string>

export const kindOfToken = (token: string): CredentialKind | undefined => {
  for (const [kind, prefix] of Object.entries(tokenPrefixes)) {
    if (token.startsWith(prefix)) return kind as CredentialKind
  }
  return undefined
}

/** A credential as listed: never the token, only its first characters for recognition. */
export const Credential = Schema.Struct({
  id: Schema.String,
  kind: CredentialKind,
  environment: Environment,
  name: Schema.NullOr(Schema.String),
  token_prefix: Schema.String,
  scopes: Schema.Array(Schema.String),
  user_id: Schema.NullOr(Schema.String),
  device_id: Schema.NullOr(Schema.String),
  app_id: Schema.NullOr(Schema.String),
  created_at: IsoDateTime,
  last_used_at: Schema.NullOr(IsoDateTime),
  expires_at: Schema.NullOr(IsoDateTime),
  revoked_at: Schema.NullOr(IsoDateTime)
}).annotate({ identifier: "Credential" })
export type Credential = typeof Credential.Type

export interface StoredCredential extends Credential {
  readonly organization_id: string
  readonly token_hash: string
  /** Groups OAuth tokens that die together (an authorization's chain). */
  readonly grant_id: string | null
}

export const Device = Schema.Struct({
  id: Schema.String,
  environment: Environment,
  name: Schema.String,
  has_pin: Schema.Boolean,
  created_at: IsoDateTime
}).annotate({ identifier: "Device" })
export type Device = typeof Device.Type

/** Who is calling: resolved from the bearer token on every request. */
export interface Principal {
  readonly kind: CredentialKind
  readonly credentialId: string
  readonly organizationId: string
  readonly environment: Environment
  readonly scopes: ReadonlySet<Scope | string>
  readonly userId: string | null
  readonly deviceId: string | null
  readonly appId: string | null
}
