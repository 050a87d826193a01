import { Schema, Struct } from "effect"
import { DeviceId } from "../auth/model.ts"
import { LocationId } from "../locations/model.ts"
import { isMaxChars, IsoDateTime, isPattern, NonBlankString, Uuid } from "../shared/schemas.ts"

export { DeviceId }

/** The language a display answers in. */
export const DisplayLocale = Schema.Literals(["ro", "en"])
export type DisplayLocale = typeof DisplayLocale.Type

/** The scopes a device token may carry (docs/decisions.md, "Design: credentials"). */
export const DeviceScope = Schema.Literals(["display:read", "display:assistant"])
export type DeviceScope = typeof DeviceScope.Type

/** A wall display. Its PIN never leaves the server: only whether one is set. */
export const Device = Schema.Struct({
  id: DeviceId,
  name: NonBlankString(200),
  location_id: Schema.NullOr(LocationId),
  locale: DisplayLocale.annotate({ description: "The language the assistant answers in when a question names none" }),
  pin_set: Schema.Boolean,
  unlock_disabled: Schema.Boolean.annotate({
    description: "True after 10 consecutive wrong PINs: unlocking stays refused (423) until a new PIN is set"
  }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "DisplayDevice" })
export type Device = typeof Device.Type

/** A device as stored: the resource's own fields, the PIN's hash and its failure count, the lockout and deletion times. */
export const DeviceRecord = Device.mapFields(Struct.omit(["pin_set", "unlock_disabled"])).mapFields(Struct.assign({
  pin_hash: Schema.NullOr(Schema.String),
  failed_pin_attempts: Schema.Int,
  unlock_disabled_at: Schema.NullOr(IsoDateTime),
  deleted_at: Schema.NullOr(IsoDateTime)
}))
export type DeviceRecord = typeof DeviceRecord.Type

const Editable = Device.mapFields(Struct.pick(["name", "location_id", "locale"]))

/** A new device: its name; a location, a locale (default `ro`) and the scopes of its token (default both display scopes). */
export const DeviceCreate = Editable.mapFields(Struct.mapOmit(["name"], Schema.optionalKey)).mapFields(Struct.assign({
  scopes: Schema.optionalKey(
    Schema.Array(DeviceScope).check(Schema.isMinLength(1), Schema.isUnique()).annotate({
      description: "Scopes of the device token (default: display:read and display:assistant)"
    })
  )
})).annotate({ identifier: "DisplayDeviceCreate" })
export type DeviceCreate = typeof DeviceCreate.Type

export const DeviceUpdate = Editable.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "DisplayDeviceUpdate" })
export type DeviceUpdate = typeof DeviceUpdate.Type

/** A new device token (on creation and rotation): shown once, only its hash is kept. */
export const DeviceToken = Schema.Struct({
  device: Device,
  credential_id: Schema.String,
  token: Schema.String.annotate({ description: "The device token (svc_dt_…): shown once, never again" }),
  scopes: Schema.Array(DeviceScope)
}).annotate({ identifier: "DisplayDeviceToken" })
export type DeviceToken = typeof DeviceToken.Type

export const RotateToken = Schema.Struct({
  scopes: Schema.optionalKey(Schema.Array(DeviceScope).check(Schema.isMinLength(1), Schema.isUnique()))
}).annotate({ identifier: "DisplayRotateToken" })
export type RotateToken = typeof RotateToken.Type

/** A display PIN: 4 to 8 digits (spec: Limits). */
export const Pin = Schema.String.check(isPattern(/^\d{4,8}$/, { message: "must be 4 to 8 digits" }))

export const PinInput = Schema.Struct({ pin: Pin }).annotate({ identifier: "DisplayPin" })
export type PinInput = typeof PinInput.Type

export const UnlockResult = Schema.Struct({
  ok: Schema.Boolean,
  retryAfterSec: Schema.Int.annotate({ description: "0 when another attempt may follow at once; otherwise the seconds to wait" })
}).annotate({ identifier: "DisplayUnlockResult" })
export type UnlockResult = typeof UnlockResult.Type

export const DeviceFilter = Schema.Struct({ location_id: Schema.optionalKey(Uuid) })
export type DeviceFilter = typeof DeviceFilter.Type

// ---- The assistant ---------------------------------------------------------

/** Limits of a question (spec: Limits). */
export const MAX_TEXT_CHARACTERS = 500
export const MAX_AUDIO_BASE64 = 400_000
export const MAX_MIME = 40

const characters = (s: string) => [...s].length

/** 1 to 500 characters, counted as characters (code points), not UTF-16 units. */
const QuestionText = Schema.String.check(
  Schema.makeFilter((s: string) => s.trim().length > 0 || "must not be blank"),
  Schema.makeFilter((s: string) =>
    characters(s) <= MAX_TEXT_CHARACTERS || `must be at most ${MAX_TEXT_CHARACTERS} characters`
  )
).annotate({ description: "The question, 1 to 500 characters (from on-device speech recognition)" })

const Base64Audio = Schema.String.check(
  isMaxChars(MAX_AUDIO_BASE64),
  Schema.makeFilter((s: string) =>
    (s.length > 0 && s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s)) || "must be base64"
  )
).annotate({ description: "Base64 audio, at most 15 seconds and 400000 characters" })

/** A question: exactly one of `text` or `audio`. */
export const AssistantQuestion = Schema.Struct({
  text: Schema.optionalKey(QuestionText),
  audio: Schema.optionalKey(Base64Audio),
  mime: Schema.optionalKey(Schema.String.check(isMaxChars(MAX_MIME))),
  locale: Schema.optionalKey(DisplayLocale.annotate({ description: "ro (default) or en" }))
}).check(
  Schema.makeFilter((q: { readonly text?: string; readonly audio?: string }) =>
    (q.text === undefined) !== (q.audio === undefined) ||
    { path: ["text"], issue: "send exactly one of text or audio" }
  )
).annotate({ identifier: "DisplayAssistantQuestion" })
export type AssistantQuestion = typeof AssistantQuestion.Type

/**
 * A figure as the display shows it. `unit` says how to read `spark` and
 * `delta`: `money` is minor units of `value.currency`, `count` is a number of
 * items (and `value` is then zero). `delta` is the last spark entry minus the
 * one before it, in the same unit. `tone` is one of positive, negative,
 * neutral, warning (docs/decisions.md, "Wall displays").
 */
export const Kpi = Schema.Struct({
  id: Schema.String,
  labelKey: Schema.String,
  label: Schema.String,
  value: Schema.Struct({ minor: Schema.Int, currency: Schema.String }),
  count: Schema.Int,
  delta: Schema.Number,
  spark: Schema.Array(Schema.Number),
  tone: Schema.Literals(["positive", "negative", "neutral", "warning"]),
  unit: Schema.Literals(["money", "count"])
}).annotate({ identifier: "DisplayKpi" })
export type Kpi = typeof Kpi.Type

export const AssistantAnswer = Schema.Struct({
  transcript: Schema.String,
  answer: Schema.String,
  kpi: Schema.NullOr(Kpi)
}).annotate({ identifier: "DisplayAssistantAnswer" })
export type AssistantAnswer = typeof AssistantAnswer.Type
