import { Context, Effect, Layer, Option } from "effect"
import { Audit } from "../audit/Audit.ts"
import type { AuditOutcome } from "../audit/model.ts"
import type { Principal } from "../auth/model.ts"
import { RateLimiter } from "../ratelimit/RateLimiter.ts"
import { BadRequest, type HashingBusy, Locked, NotFound, NotImplemented, RateLimited, ValidationFailed } from "../shared/errors.ts"
import { PasswordHashing } from "../shared/PasswordHashing.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { DeviceRepo } from "./DeviceRepo.ts"
import type { AssistantAnswer, AssistantQuestion, DisplayLocale, UnlockResult } from "./model.ts"
import { Pulse } from "./Pulse.ts"
import { assistantPolicy, retryAfterSec, UNLOCK_DISABLED_AFTER, unlockPolicy } from "./rules.ts"

/** Who asks: the credential of the request, and the request's id for the audit log. */
export interface DisplayCaller {
  readonly principal: Principal
  readonly requestId: string | null
}

const PIN = /^\d{4,8}$/

const tenantOf = (p: Principal): Tenant => ({ organizationId: p.organizationId, environment: p.environment })

/**
 * What a wall display does with its device token: re-check its PIN on the
 * server, and ask the pulse assistant. Every unlock attempt and every question
 * leaves one audit row (the credential, the device, the outcome, the request
 * id — never the PIN); nothing else is written but the failure count of a
 * wrong PIN.
 */
export class Display extends Context.Service<Display, {
  readonly unlock: (
    caller: DisplayCaller,
    pin: string
  ) => Effect.Effect<UnlockResult, BadRequest | Locked | RateLimited | ValidationFailed | NotFound | HashingBusy>
  readonly ask: (
    caller: DisplayCaller,
    question: AssistantQuestion
  ) => Effect.Effect<AssistantAnswer, RateLimited | NotImplemented | ValidationFailed>
}>()("@opsplatform/core/display/Display") {
  static readonly layer: Layer.Layer<
    Display,
    never,
    DeviceRepo | RateLimiter | Audit | Pulse | Transactor | PasswordHashing
  > = Layer.effect(
    Display,
    Effect.gen(function*() {
      const devices = yield* DeviceRepo
      const limiter = yield* RateLimiter
      const audit = yield* Audit
      const pulse = yield* Pulse
      const tx = yield* Transactor
      const hashing = yield* PasswordHashing

      const record = (
        caller: DisplayCaller,
        action: "display.unlock" | "display.assistant",
        outcome: AuditOutcome,
        details: Record<string, string | number | boolean | null>
      ) => {
        const p = caller.principal
        return audit.record(tenantOf(p), {
          action,
          outcome,
          actor_credential_id: p.credentialId,
          actor_organization_id: p.organizationId,
          resource_type: p.deviceId === null ? null : "device",
          resource_id: p.deviceId,
          device_id: p.deviceId,
          request_id: caller.requestId,
          details: { credential_kind: p.kind, ...details }
        })
      }

      const refused = (retryAfter: number, limit: typeof unlockPolicy, what: string) =>
        new RateLimited({ retryAfterSec: retryAfter, limit: limit.limit, windowSec: limit.windowSeconds, policy: what })

      return Display.of({
        unlock: Effect.fn("Display.unlock")(function*(caller, pin) {
          const p = caller.principal
          const deny = (result: string, extra: Record<string, number> = {}) =>
            record(caller, "display.unlock", "denied", { result, ...extra })
          if (p.kind !== "device" || p.deviceId === null) {
            const personal = p.kind === "personal"
            yield* deny(personal ? "personal_token_not_allowed" : "device_token_required")
            return yield* new BadRequest(
              personal
                ? {
                  errorCode: "personal_token_not_allowed",
                  reason: "A personal token cannot unlock a display; use the display's device token"
                }
                : { errorCode: "device_token_required", reason: "Only a display's device token can unlock it" }
            )
          }
          const found = yield* devices.find(tenantOf(p), p.deviceId)
          if (Option.isNone(found)) return yield* new NotFound({ resource: "device", id: p.deviceId })
          const device = found.value
          if (device.unlock_disabled_at !== null) {
            yield* deny("unlock_disabled")
            return yield* new Locked({
              errorCode: "unlock_disabled",
              reason: `Unlocking is disabled after ${UNLOCK_DISABLED_AFTER} wrong PINs in a row; a manager must set a new PIN`
            })
          }
          if (device.pin_hash === null) {
            yield* deny("pin_not_set")
            return yield* new BadRequest({ errorCode: "pin_not_set", reason: "This display has no PIN; a manager sets one first" })
          }
          if (!PIN.test(pin)) return yield* ValidationFailed.field("pin", "must be 4 to 8 digits")
          // Counted before the PIN is checked, so concurrent guesses cannot pass the limit together.
          const decision = yield* limiter.consume(`display-unlock:${device.id}`, unlockPolicy)
          if (!decision.allowed) {
            yield* deny("rate_limited", { retry_after_sec: decision.resetSeconds })
            return yield* refused(decision.resetSeconds, unlockPolicy, "PIN attempts of this display")
          }
          const right = yield* hashing.verify(pin, device.pin_hash)
          const tenant = tenantOf(p)
          if (right) {
            yield* devices.recordRightPin(tenant, device.id)
            yield* record(caller, "display.unlock", "success", { result: "ok" })
            return { ok: true, retryAfterSec: 0 }
          }
          const wrong = yield* tx.withTransaction(Effect.gen(function*() {
            const counted = yield* devices.recordWrongPin(tenant, device.id, UNLOCK_DISABLED_AFTER, yield* nowIso)
            const state = Option.getOrElse(counted, () => ({ consecutive: 0, disabled: false }))
            yield* record(caller, "display.unlock", "failure", {
              result: "wrong_pin",
              consecutive_failures: state.consecutive,
              unlock_disabled: state.disabled
            })
            return state
          }))
          if (wrong.disabled) {
            return yield* new Locked({
              errorCode: "unlock_disabled",
              reason: `Wrong PIN; after ${UNLOCK_DISABLED_AFTER} in a row unlocking is disabled until a manager sets a new PIN`
            })
          }
          return { ok: false, retryAfterSec: retryAfterSec(decision) }
        }),

        ask: Effect.fn("Display.ask")(function*(caller, question) {
          const p = caller.principal
          const text = question.text
          if ((text === undefined) === (question.audio === undefined)) {
            return yield* ValidationFailed.field("text", "send exactly one of text or audio")
          }
          // One transaction, one commit: the count of the question, the reads, and its audit row.
          const outcome = yield* tx.withTransaction(Effect.gen(function*() {
            const decision = yield* limiter.consume(`display-assistant:${p.deviceId ?? p.credentialId}`, assistantPolicy)
            if (!decision.allowed) {
              yield* record(caller, "display.assistant", "denied", { result: "rate_limited", retry_after_sec: decision.resetSeconds })
              return { _tag: "Refused", retryAfter: decision.resetSeconds } as const
            }
            if (text === undefined) {
              yield* record(caller, "display.assistant", "failure", { result: "stt_unavailable", mode: "audio" })
              return { _tag: "Audio" } as const
            }
            const device = p.deviceId === null ? Option.none() : yield* devices.find(tenantOf(p), p.deviceId)
            const locale: DisplayLocale = question.locale ?? Option.match(device, { onNone: () => "ro", onSome: (d) => d.locale })
            const answer = yield* pulse.answer(tenantOf(p), text, locale)
            yield* record(caller, "display.assistant", "success", {
              result: answer.kpi === null ? "not_understood" : "answered",
              kpi: answer.kpi?.id ?? null,
              locale,
              mode: "text"
            })
            return { _tag: "Answered", answer } as const
          }))
          switch (outcome._tag) {
            case "Refused":
              return yield* refused(outcome.retryAfter, assistantPolicy, "questions of this display")
            case "Audio":
              return yield* new NotImplemented({
                errorCode: "STT_UNAVAILABLE",
                reason: "Speech recognition is not available on the server; send the text the display recognized"
              })
            case "Answered":
              return outcome.answer
          }
        })
      })
    })
  )
}
