import { Clock, Context, Effect, Layer, Option } from "effect"
import type { Tenant } from "../shared/tenant.ts"
import { localDate } from "../shared/time.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import type { AssistantAnswer } from "./model.ts"
import { answerOf, helpAnswer } from "./pulse/answers.ts"
import { planFor, seriesOf } from "./pulse/figures.ts"
import type { Locale } from "./pulse/format.ts"
import { matchIntent } from "./pulse/intents.ts"
import { PulseRepo } from "./PulseRepo.ts"

/**
 * The pulse: a question in, an answer with its figure out. The intent is
 * matched in process; the figure is computed live from the database with one
 * or two SQL aggregates, over periods of the organization's time zone. Reads
 * only.
 */
export class Pulse extends Context.Service<Pulse, {
  readonly answer: (tenant: Tenant, text: string, locale: Locale) => Effect.Effect<AssistantAnswer>
}>()("@opsplatform/core/display/Pulse") {
  static readonly layer: Layer.Layer<Pulse, never, PulseRepo | TenancyRepo> = Layer.effect(
    Pulse,
    Effect.gen(function*() {
      const repo = yield* PulseRepo
      const tenancy = yield* TenancyRepo
      return Pulse.of({
        answer: Effect.fn("Pulse.answer")(function*(tenant, text, locale) {
          const intent = matchIntent(text)
          if (intent === undefined) return helpAnswer(text, locale)
          const org = yield* tenancy.findOrganization(tenant.organizationId)
          const zone = Option.match(org, { onNone: () => "UTC", onSome: (o) => o.time_zone })
          const today = localDate(yield* Clock.currentTimeMillis, zone)
          const plan = planFor(intent, today, zone)
          const series = seriesOf(yield* repo.sums(tenant, plan.series), plan.series)
          const apart = plan.count === undefined
            ? undefined
            : seriesOf(yield* repo.sums(tenant, plan.count), plan.count).counts[0]
          return answerOf(text, intent, series, plan.series.mode === "flow", locale, apart)
        })
      })
    })
  )
}
