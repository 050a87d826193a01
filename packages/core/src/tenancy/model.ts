import { Schema } from "effect"
import { IsoDateTime, NonBlankString } from "../shared/schemas.ts"

export const Organization = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  time_zone: Schema.String.annotate({ description: "IANA time zone the organization's dates are read in" }),
  escalation_delay_days: Schema.Int,
  created_at: IsoDateTime
}).annotate({ identifier: "Organization" })
export type Organization = typeof Organization.Type

export const MemberRole = Schema.Literals(["owner", "admin", "member", "driver"])
export type MemberRole = typeof MemberRole.Type

export const User = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String,
  created_at: IsoDateTime
}).annotate({ identifier: "User" })
export type User = typeof User.Type

export const Member = Schema.Struct({
  user_id: Schema.String,
  organization_id: Schema.String,
  name: Schema.String,
  email: Schema.String,
  role: MemberRole,
  joined_at: IsoDateTime
}).annotate({ identifier: "Member" })
export type Member = typeof Member.Type

export const OrganizationName = NonBlankString(200)
export const MemberName = NonBlankString(200)
export const Email = Schema.String.check(
  Schema.isMaxLength(254),
  Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: "must be an email address" })
)

export const isValidTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone })
    return true
  } catch {
    return false
  }
}
