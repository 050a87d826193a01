import { Schema, Struct } from "effect"
import { Filters, QueryBoolean } from "../shared/filters.ts"
import { IsoDateTime, Uuid } from "../shared/schemas.ts"
import { Environment } from "../shared/tenant.ts"
import { UserId } from "../tenancy/model.ts"
import type { Scope } from "./scopes.ts"

export const CredentialKind = Schema.Literals(["api_key", "personal", "device", "oauth"])
export type CredentialKind = typeof CredentialKind.Type

/** Token prefixes by credential kind (docs/decisions.md, "Design: credentials"). */
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

export const CredentialId = Uuid.pipe(Schema.brand("CredentialId"))
export type CredentialId = typeof CredentialId.Type

export const DeviceId = Uuid.pipe(Schema.brand("DeviceId"))
export type DeviceId = typeof DeviceId.Type

/** A credential as listed: never the token, only its first characters for recognition. */
export const Credential = Schema.Struct({
  id: CredentialId,
  kind: CredentialKind,
  environment: Environment,
  name: Schema.NullOr(Schema.String),
  token_prefix: Schema.String,
  scopes: Schema.Array(Schema.String),
  user_id: Schema.NullOr(UserId),
  device_id: Schema.NullOr(DeviceId),
  app_id: Schema.NullOr(Schema.String),
  created_at: IsoDateTime,
  last_used_at: Schema.NullOr(IsoDateTime),
  expires_at: Schema.NullOr(IsoDateTime),
  revoked_at: Schema.NullOr(IsoDateTime)
}).annotate({ identifier: "Credential" })
export type Credential = typeof Credential.Type

/** A credential as stored: the listed fields, its organization, its token's hash and its grant. */
export const StoredCredential = Credential.mapFields(Struct.assign({
  organization_id: Schema.String,
  token_hash: Schema.String,
  /** Groups OAuth tokens that die together (an authorization's chain). */
  grant_id: Schema.NullOr(Schema.String)
}))
export type StoredCredential = typeof StoredCredential.Type

/** Who is calling: resolved from the bearer token on every request. */
export interface Principal {
  readonly kind: CredentialKind
  readonly credentialId: CredentialId
  readonly organizationId: string
  readonly environment: Environment
  readonly scopes: ReadonlySet<Scope | string>
  readonly userId: UserId | null
  readonly deviceId: DeviceId | null
  readonly appId: string | null
  /**
   * Set while a cabinet's credential acts for a client (the
   * `Opsplatform-Organization` header, through an active access grant): the
   * principal's organization is then the client's and its scopes those the
   * credential holds and the grant allows; this names the credential's own
   * organization and the grant.
   */
  readonly onBehalf?: { readonly cabinetOrganizationId: string; readonly grantId: string } | undefined
}

export const CredentialFilter = Schema.Struct({
  kind: Schema.optionalKey(CredentialKind),
  revoked: Schema.optionalKey(QueryBoolean.pipe(Filters.present("revoked_at")))
})
export type CredentialFilter = typeof CredentialFilter.Type
