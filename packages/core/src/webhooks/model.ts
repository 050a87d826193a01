import { Schema, Struct } from "effect"
import { subscribableEventTypes } from "../events/catalog.ts"
import { Filters } from "../shared/filters.ts"
import { Instant, isMaxChars, IsoDateTime, isPattern, Uuid } from "../shared/schemas.ts"
import { Environment } from "../shared/tenant.ts"

/** Where a delivery stands (docs/decisions.md, "Design: events and webhooks"). `failed` will be retried; `dead` will not. */
export const DeliveryStatus = Schema.Literals(["pending", "sending", "succeeded", "failed", "dead"])
export type DeliveryStatus = typeof DeliveryStatus.Type

/** Why a subscription stopped receiving: its owner turned it off, or its endpoint answered 410 Gone. */
export const DisabledReason = Schema.Literals(["by_request", "endpoint_gone"])
export type DisabledReason = typeof DisabledReason.Type

export const WebhookSubscriptionId = Uuid.pipe(Schema.brand("WebhookSubscriptionId"))
export type WebhookSubscriptionId = typeof WebhookSubscriptionId.Type

export const WebhookDeliveryId = Uuid.pipe(Schema.brand("WebhookDeliveryId"))
export type WebhookDeliveryId = typeof WebhookDeliveryId.Type

/** A signing secret's id; it is also the context its sealed form is bound to (`secretContext`). */
export const WebhookSecretId = Uuid.pipe(Schema.brand("WebhookSecretId"))
export type WebhookSecretId = typeof WebhookSecretId.Type

export const WebhookAttemptId = Uuid.pipe(Schema.brand("WebhookAttemptId"))
export type WebhookAttemptId = typeof WebhookAttemptId.Type

/**
 * How deliveries are signed (Standard Webhooks): `v1` is HMAC-SHA256 with a
 * shared `whsec_` secret; `v1a` is Ed25519, signed with a private `whsk_` key
 * the platform keeps and verified with the public `whpk_` key.
 */
export const SigningScheme = Schema.Literals(["v1", "v1a"]).annotate({
  description: "`v1`: HMAC-SHA256 with a shared `whsec_` secret. `v1a`: Ed25519; receivers verify with the public `whpk_` key"
})
export type SigningScheme = typeof SigningScheme.Type

export const MAX_URL_LENGTH = 2048
export const MAX_DESCRIPTION_LENGTH = 500

const WebhookUrl = Schema.String.check(
  Schema.isMinLength(1),
  isMaxChars(MAX_URL_LENGTH)
).annotate({ description: "The receiver's address: https (plain http is accepted in the sandbox only)" })

const SubscribableType = Schema.Literals(subscribableEventTypes as unknown as readonly [string, ...Array<string>])

const EventTypes = Schema.Array(SubscribableType).check(
  Schema.makeFilter((types: ReadonlyArray<string>) => types.length > 0 || "must name at least one event type"),
  Schema.makeFilter((types: ReadonlyArray<string>) => new Set(types).size === types.length || "must not repeat a type")
).annotate({ description: "Event types to receive (see GET /v1/webhooks/events)" })

export const WebhookSubscription = Schema.Struct({
  id: WebhookSubscriptionId,
  url: Schema.String,
  description: Schema.NullOr(Schema.String.check(isMaxChars(MAX_DESCRIPTION_LENGTH))),
  event_types: EventTypes,
  enabled: Schema.Boolean,
  disabled_reason: Schema.NullOr(DisabledReason),
  /** The scheme of the current signing key. */
  signing_scheme: SigningScheme,
  public_key: Schema.NullOr(Schema.String).annotate({
    description: "With `v1a`, the current public key (`whpk_` + base64 of the 32-byte Ed25519 key); `null` with `v1`. " +
      "GET /v1/webhooks/{id}/public-keys lists every key deliveries are signed with"
  }),
  /** While a rotated-out secret is still valid, when it stops being used; `null` otherwise. */
  previous_secret_expires_at: Schema.NullOr(IsoDateTime),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "WebhookSubscription" })
export type WebhookSubscription = typeof WebhookSubscription.Type

/**
 * A subscription with its signing secret: returned once, on creation and on
 * rotation. A `v1a` key's private half never leaves the platform, so there is
 * no secret to show: the receiver verifies with `public_key`.
 */
export const WebhookSubscriptionWithSecret = WebhookSubscription.mapFields(Struct.assign({
  secret: Schema.NullOr(Schema.String).annotate({
    description: "With `v1`, the signing secret, `whsec_` + base64, shown only in this response; `null` with `v1a` (verify with `public_key`)"
  })
})).annotate({ identifier: "WebhookSubscriptionWithSecret" })
export type WebhookSubscriptionWithSecret = typeof WebhookSubscriptionWithSecret.Type

/**
 * A subscription as stored. `latest_secret_expiry` is read from its secrets
 * (when the latest rotated-out one expires, if any) and never written; the
 * resource shows it as `previous_secret_expires_at` while it lies ahead.
 * `signing_scheme` and `public_key` are read from its current secret too.
 */
export const StoredSubscription = WebhookSubscription.mapFields(Struct.omit(["previous_secret_expires_at"])).mapFields(
  Struct.assign({ latest_secret_expiry: Schema.NullOr(IsoDateTime) })
)
export type StoredSubscription = typeof StoredSubscription.Type

/**
 * What a caller may set. The URL is bounded as sent, not as stored: the stored
 * one is its normalized form (`URL.href`), which may be longer. A subscription
 * always starts enabled, so `enabled` is accepted on update only.
 */
const Editable = WebhookSubscription.mapFields(Struct.pick(["url", "event_types", "description", "enabled"])).mapFields(
  Struct.assign({ url: WebhookUrl })
)

export const WebhookSubscriptionCreate = Editable.mapFields(Struct.pick(["url", "event_types", "description"])).mapFields(
  Struct.mapOmit(["url", "event_types"], Schema.optionalKey)
).mapFields(Struct.assign({
  signing_scheme: Schema.optionalKey(SigningScheme.annotate({ description: "How deliveries are signed; default `v1`" }))
})).annotate({ identifier: "WebhookSubscriptionCreate" })
export type WebhookSubscriptionCreate = typeof WebhookSubscriptionCreate.Type

export const WebhookSubscriptionUpdate = Editable.mapFields(Struct.map(Schema.optionalKey)).annotate({
  identifier: "WebhookSubscriptionUpdate"
})
export type WebhookSubscriptionUpdate = typeof WebhookSubscriptionUpdate.Type

/**
 * A signing key as stored: the `whsec_` secret or the `whsk_` private key,
 * sealed under the operator key, and for `v1a` its public key in the clear.
 * `expires_at` null means current.
 */
export const StoredSecret = Schema.Struct({
  id: WebhookSecretId,
  subscription_id: WebhookSubscriptionId,
  scheme: SigningScheme,
  sealed: Schema.String,
  public_key: Schema.NullOr(Schema.String),
  created_at: IsoDateTime,
  expires_at: Schema.NullOr(IsoDateTime)
})
export type StoredSecret = typeof StoredSecret.Type

export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 60 * 60
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 60 * 60

export const WebhookSecretRotate = Schema.Struct({
  grace_period_seconds: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: MAX_ROTATION_GRACE_SECONDS })).annotate({
      description: "How long the previous secret stays valid, in seconds (default 86400; 0 ends it now)"
    })
  ),
  signing_scheme: Schema.optionalKey(SigningScheme.annotate({
    description: "The scheme of the new key; default the current one. Changing it is a rotation: until the grace period ends, " +
      "every delivery carries an entry of each scheme"
  }))
}).annotate({ identifier: "WebhookSecretRotate" })

/** The current signing key of a subscription, revealed on request: a `v1` secret, or a `v1a` key's public half. */
export const WebhookSecret = Schema.Struct({
  signing_scheme: SigningScheme,
  secret: Schema.NullOr(Schema.String).annotate({ description: "With `v1`, the current signing secret (`whsec_` + base64); `null` with `v1a`" }),
  public_key: Schema.NullOr(Schema.String).annotate({ description: "With `v1a`, the current public key (`whpk_`); `null` with `v1`" })
}).annotate({ identifier: "WebhookSecret" })
export type WebhookSecret = typeof WebhookSecret.Type

/** A public key deliveries are signed for: the current `v1a` key, and rotated-out ones until they expire. */
export const WebhookPublicKey = Schema.Struct({
  id: WebhookSecretId,
  public_key: Schema.String.annotate({ description: "`whpk_` + base64 of the 32-byte Ed25519 public key" }),
  created_at: IsoDateTime,
  expires_at: Schema.NullOr(IsoDateTime.annotate({ description: "When deliveries stop carrying its signature; null for the current key" }))
}).annotate({ identifier: "WebhookPublicKey" })
export type WebhookPublicKey = typeof WebhookPublicKey.Type
export type WebhookSecretRotate = typeof WebhookSecretRotate.Type

/**
 * An attempt as logged. Its `created_at` is when it was made: the resource
 * calls it `attempted_at`, the attempts list pages by it.
 */
export const AttemptRecord = Schema.Struct({
  id: WebhookAttemptId,
  delivery_id: WebhookDeliveryId,
  number: Schema.Int.annotate({ description: "1 for the delivery's first attempt, counting across redeliveries" }),
  created_at: IsoDateTime,
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String),
  response_body: Schema.NullOr(Schema.String.annotate({ description: "The first 4 KiB of the receiver's answer" })),
  next_attempt_at: Schema.NullOr(IsoDateTime.annotate({ description: "When the retry this attempt scheduled is due" }))
})
export type AttemptRecord = typeof AttemptRecord.Type

export const WebhookAttempt = AttemptRecord.mapFields((fields) =>
  Struct.renameKeys(Struct.omit(fields, ["id", "delivery_id"]), { created_at: "attempted_at" })
).annotate({ identifier: "WebhookAttempt" })
export type WebhookAttempt = typeof WebhookAttempt.Type

export const toWebhookAttempt = ({ created_at, delivery_id: _d, id: _i, ...attempt }: AttemptRecord): WebhookAttempt => ({
  ...attempt,
  attempted_at: created_at
})

/** How many of a delivery's attempts it carries inline; the full history is its attempts list. */
export const INLINE_ATTEMPTS = 10

export const WebhookDelivery = Schema.Struct({
  id: WebhookDeliveryId,
  subscription_id: WebhookSubscriptionId,
  event_id: Schema.String,
  event_type: Schema.String,
  status: DeliveryStatus,
  attempt_count: Schema.Int.annotate({ description: "Attempts made over the delivery's life" }),
  next_attempt_at: Schema.NullOr(IsoDateTime),
  last_attempt_at: Schema.NullOr(IsoDateTime),
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  attempts: Schema.Array(WebhookAttempt).annotate({
    description: `The ${INLINE_ATTEMPTS} most recent attempts, newest first`
  }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

/**
 * A delivery as stored: the resource without its inline attempts, plus the
 * worker's bookkeeping. `attempts` here is the column, the attempts used of
 * the current budget (redeliver resets it); `attempt_count` never resets.
 */
export const StoredDelivery = WebhookDelivery.mapFields(Struct.omit(["attempts"])).mapFields(Struct.assign({
  outbox_event_id: Uuid,
  attempts: Schema.Int,
  locked_until: Schema.NullOr(IsoDateTime),
  claim_token: Schema.NullOr(Uuid)
}))
export type StoredDelivery = typeof StoredDelivery.Type

/** The resource of a stored delivery; a finished delivery has no next attempt, whatever its row still says. */
export const toWebhookDelivery = (
  { attempts: _used, claim_token: _c, locked_until: _l, outbox_event_id: _e, ...delivery }: StoredDelivery,
  attempts: ReadonlyArray<WebhookAttempt>
): WebhookDelivery => ({
  ...delivery,
  next_attempt_at: delivery.status === "succeeded" || delivery.status === "dead" ? null : delivery.next_attempt_at,
  attempts
})

export const WebhookEventType = Schema.Struct({
  type: Schema.String,
  description: Schema.String,
  schema: Schema.Record(Schema.String, Schema.Unknown).annotate({
    description: "The JSON Schema (draft 2020-12) of this type's webhook body: the envelope and exactly its `data` fields"
  }),
  example: Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "An example webhook body of this type" })
}).annotate({ identifier: "WebhookEventType" })
export type WebhookEventType = typeof WebhookEventType.Type

export const WebhookRedeliver = Schema.Struct({
  force: Schema.optionalKey(Schema.Boolean.annotate({ description: "Required to send an already succeeded delivery again" }))
}).annotate({ identifier: "WebhookRedeliver" })
export type WebhookRedeliver = typeof WebhookRedeliver.Type

export const WebhookTestResult = Schema.Struct({
  event_id: Schema.String,
  delivery_id: WebhookDeliveryId,
  payload: Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "The webhook body the test delivery sends" })
}).annotate({ identifier: "WebhookTestResult" })
export type WebhookTestResult = typeof WebhookTestResult.Type

/** The delivery log's filter: its state, the event's type, and when the delivery was created (a half-open range). */
export const DeliveryFilter = Schema.Struct({
  status: Schema.optionalKey(DeliveryStatus),
  event_type: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), isMaxChars(100)).annotate({
    description: "Only deliveries of this event type"
  })),
  created_from: Schema.optionalKey(Instant.annotate({ description: "created_at on or after" }).pipe(Filters.from("created_at"))),
  created_before: Schema.optionalKey(Instant.annotate({ description: "created_at before" }).pipe(Filters.before("created_at")))
})
export type DeliveryFilter = typeof DeliveryFilter.Type

/** The delivery state a worker writes back after an attempt. */
export interface DeliveryOutcome {
  readonly id: WebhookDeliveryId
  readonly claimToken: string
  readonly status: "succeeded" | "failed" | "dead"
  /** Attempts used of the current budget. */
  readonly attempts: number
  readonly nextAttemptAt: string | null
  readonly lastAttemptAt: string
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  /** The attempts to log (the one just made, and one left without an outcome by a stopped worker). */
  readonly log: ReadonlyArray<AttemptRecord>
  /** The receiver answered 410 Gone: disable the subscription. */
  readonly disableSubscription: boolean
}

const ClaimTenant = Schema.Struct({ organizationId: Schema.String, environment: Environment })

/** A delivery a worker has leased: everything needed to send it without another query. */
export const ClaimedDelivery = Schema.Struct({
  id: WebhookDeliveryId,
  tenant: ClaimTenant,
  subscriptionId: WebhookSubscriptionId,
  url: Schema.String,
  eventId: Schema.String,
  eventType: Schema.String,
  /** When the event was published (ISO 8601): the first attempt's delay is measured from it. */
  eventCreatedAt: Schema.String,
  /** The exact body to send. */
  payload: Schema.String,
  /** Attempts used of the current budget before this claim. */
  attempts: Schema.Int,
  /** The number this attempt carries in the log. */
  attemptNumber: Schema.Int,
  /** The previous lease ran out without an outcome (its worker stopped): that attempt counts as failed. */
  reclaimed: Schema.Boolean,
  claimToken: Uuid,
  /** The subscription's valid secrets and keys, newest first. */
  secrets: Schema.Array(StoredSecret.mapFields(Struct.pick(["id", "scheme", "sealed"])))
})
export type ClaimedDelivery = typeof ClaimedDelivery.Type

// ---- Portal sessions ------------------------------------------------------------

export const PortalSessionId = Uuid.pipe(Schema.brand("PortalSessionId"))
export type PortalSessionId = typeof PortalSessionId.Type

export const DEFAULT_PORTAL_SECONDS = 60 * 60
export const MAX_PORTAL_SECONDS = 24 * 60 * 60
export const MIN_PORTAL_SECONDS = 60
export const MAX_FRAME_ANCESTORS = 10

/** An origin a page may be framed by: scheme, host and optional port, nothing else (it goes into a CSP header). */
const FrameOrigin = Schema.String.check(
  isMaxChars(200),
  isPattern(/^https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?$/, { message: "must be an origin such as https://app.example.com" })
)

/** How the portal looks inside the embedding page: CSS variables, never CSS of the caller's. */
export const PortalTheme = Schema.Struct({
  accent_color: Schema.optionalKey(Schema.String.check(
    isMaxChars(7),
    isPattern(/^#[0-9A-Fa-f]{6}$/, { message: "must be a colour as #rrggbb" })
  ).annotate({ description: "Links, buttons and focus rings, as #rrggbb" })),
  font_family: Schema.optionalKey(Schema.String.check(
    isMaxChars(100),
    isPattern(/^[A-Za-z0-9 ,-]+$/, { message: "must be font names separated by commas (letters, digits, spaces, hyphens)" })
  ).annotate({ description: "A CSS font-family list of names, e.g. `Inter, system-ui, sans-serif`" })),
  color_scheme: Schema.optionalKey(Schema.Literals(["light", "dark", "auto"]).annotate({
    description: "`auto` (default) follows the reader's system setting"
  }))
}).annotate({ identifier: "PortalTheme" })
export type PortalTheme = typeof PortalTheme.Type

export const PortalSessionCreate = Schema.Struct({
  expires_in_seconds: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: MIN_PORTAL_SECONDS, maximum: MAX_PORTAL_SECONDS })).annotate({
      description: `How long the link and the session it opens last, in seconds (default ${DEFAULT_PORTAL_SECONDS}, at most ${MAX_PORTAL_SECONDS})`
    })
  ),
  read_only: Schema.optionalKey(Schema.Boolean.annotate({ description: "Show everything, change nothing (default false)" })),
  event_types: Schema.optionalKey(EventTypes.annotate({
    description: "Only these event types are offered in the portal's catalog and subscriptions (default: every type)"
  })),
  frame_ancestors: Schema.optionalKey(Schema.Array(FrameOrigin).check(Schema.isMaxLength(MAX_FRAME_ANCESTORS)).annotate({
    description: "Origins allowed to embed the portal in a frame (Content-Security-Policy `frame-ancestors`); default none"
  })),
  theme: Schema.optionalKey(PortalTheme)
}).annotate({ identifier: "PortalSessionCreate" })
export type PortalSessionCreate = typeof PortalSessionCreate.Type

/** A portal session as the API shows it; `url` only in the answer that created it. */
export const PortalSession = Schema.Struct({
  id: PortalSessionId,
  read_only: Schema.Boolean,
  event_types: Schema.NullOr(Schema.Array(Schema.String)),
  frame_ancestors: Schema.Array(Schema.String),
  theme: PortalTheme,
  created_at: IsoDateTime,
  expires_at: IsoDateTime
}).annotate({ identifier: "PortalSession" })
export type PortalSession = typeof PortalSession.Type

export const PortalSessionCreated = PortalSession.mapFields(Struct.assign({
  url: Schema.String.annotate({
    description: "The one-time link to the portal. Hand it to the person who opens it; it works once, until `expires_at`"
  })
})).annotate({ identifier: "PortalSessionCreated" })
export type PortalSessionCreated = typeof PortalSessionCreated.Type

/**
 * A portal session as stored: only hashes of the link's token and of the
 * browser cookie it was exchanged for, and whose session it is.
 */
export const StoredPortalSession = PortalSession.mapFields(Struct.assign({
  organization_id: Schema.String,
  environment: Environment,
  link_hash: Schema.String,
  cookie_hash: Schema.NullOr(Schema.String),
  exchanged_at: Schema.NullOr(IsoDateTime),
  revoked_at: Schema.NullOr(IsoDateTime)
}))
export type StoredPortalSession = typeof StoredPortalSession.Type

export const toPortalSession = (
  { cookie_hash: _c, environment: _e, exchanged_at: _x, link_hash: _l, organization_id: _o, revoked_at: _r, ...session }: StoredPortalSession
): PortalSession => session
