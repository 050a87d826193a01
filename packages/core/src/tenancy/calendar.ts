import { Clock, Effect, Option } from "effect"
import { localDate } from "../shared/time.ts"
import type { TenancyRepo } from "./TenancyRepo.ts"

/**
 * Today's date (YYYY-MM-DD) in the organization's time zone: the day against
 * which "overdue", "due this week" and daily checks are read. An organization
 * that cannot be found reads UTC.
 */
export const organizationToday = (
  tenancy: TenancyRepo["Service"],
  organizationId: string
): Effect.Effect<string> =>
  Effect.gen(function*() {
    const org = yield* tenancy.findOrganization(organizationId)
    const zone = Option.match(org, { onNone: () => "UTC", onSome: (o) => o.time_zone })
    return localDate(yield* Clock.currentTimeMillis, zone)
  })
