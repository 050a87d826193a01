import { Schema, Struct } from "effect"
import { isMaxChars, IsoDateTime, isPattern, NonBlankString, Uuid } from "../shared/schemas.ts"

export const OrganizationId = Uuid.pipe(Schema.brand("OrganizationId"))
export type OrganizationId = typeof OrganizationId.Type

export const UserId = Uuid.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

/** Zones already found valid: building a formatter to check one costs more than the rest of a row's decoding. */
const validZones = new Set<string>()

export const isValidTimeZone = (zone: string): boolean => {
  if (validZones.has(zone)) return true
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone })
  } catch {
    return false
  }
  // IANA names a few hundred zones; Intl also takes other spellings of them, so the memory is capped.
  if (validZones.size < 1000) validZones.add(zone)
  return true
}

export const OrganizationName = NonBlankString(200)

/** Annotated before its check, which would otherwise keep the description out of the API document. */
export const TimeZone = Schema.String.annotate({
  description: "IANA time zone, e.g. Europe/Bucharest: the organization's dates (obligation buckets, notices) are read in it"
}).check(
  Schema.makeFilter((zone: string) => isValidTimeZone(zone) || "must be an IANA time zone such as Europe/Bucharest")
)

export const EscalationDelayDays = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 365 })).annotate({
  description: "Days an obligation stays overdue before it is escalated (0 to 365)"
})

/**
 * The organization's Romanian CUI/CIF: how an accountant's cabinet and its
 * clients find each other (access grants). Written with or without `RO`,
 * checked with its control digit, stored without the prefix; one
 * organization per number.
 */
export const OrganizationVatNumber = Schema.NullOr(Schema.String.check(isMaxChars(40))).annotate({
  description: "Romanian CUI/CIF, stored without the RO prefix (checked with its control digit; one organization per number); null clears it",
  examples: ["14399840"]
})

export const Organization = Schema.Struct({
  id: OrganizationId,
  name: OrganizationName,
  time_zone: TimeZone,
  escalation_delay_days: EscalationDelayDays,
  vat_number: OrganizationVatNumber,
  created_at: IsoDateTime
}).annotate({ identifier: "Organization" })
export type Organization = typeof Organization.Type

/** A new organization: its name, and a time zone that defaults to UTC; the escalation delay starts at its default. */
export const OrganizationCreate = Organization.mapFields(Struct.pick(["name", "time_zone"])).mapFields(
  Struct.mapOmit(["name"], Schema.optionalKey)
).annotate({ identifier: "OrganizationCreate" })
export type OrganizationCreate = typeof OrganizationCreate.Type

/** The settings: every field but the id and the creation time, each optional. */
export const OrganizationUpdate = Organization.mapFields(Struct.pick(["name", "time_zone", "escalation_delay_days", "vat_number"]))
  .mapFields(Struct.map(Schema.optionalKey))
  .annotate({ identifier: "OrganizationUpdate" })
export type OrganizationUpdate = typeof OrganizationUpdate.Type

export const MemberRole = Schema.Literals(["owner", "admin", "member", "driver"])
export type MemberRole = typeof MemberRole.Type

export const User = Schema.Struct({
  id: UserId,
  email: Schema.String,
  name: Schema.String,
  created_at: IsoDateTime
}).annotate({ identifier: "User" })
export type User = typeof User.Type

/** A user as stored: with the hash of the sign-in password (null until one is set), which the resource never shows. */
export const UserRecord = User.mapFields(Struct.assign({ password_hash: Schema.NullOr(Schema.String) }))
export type UserRecord = typeof UserRecord.Type

/** `organization_id` here and on other records is the tenant's, a plain string as `Tenant` holds it. */
export const Member = Schema.Struct({
  user_id: UserId,
  organization_id: Schema.String,
  name: Schema.String,
  email: Schema.String,
  role: MemberRole,
  joined_at: IsoDateTime
}).annotate({ identifier: "Member" })
export type Member = typeof Member.Type

/** A membership as stored; the member's name and email are the user's. */
export const Membership = Member.mapFields(Struct.pick(["organization_id", "user_id", "role", "joined_at"]))
export type Membership = typeof Membership.Type

