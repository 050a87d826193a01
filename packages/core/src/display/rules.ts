import type { RateDecision, RatePolicy } from "../ratelimit/RateLimiter.ts"
import type { Device, DeviceRecord, DeviceScope } from "./model.ts"

/** PIN attempts per device (spec: Limits): 5 in any minute. */
export const unlockPolicy: RatePolicy = { name: "unlock", limit: 5, windowSeconds: 60 }

/** Questions per device (spec: Limits): 20 in any minute. */
export const assistantPolicy: RatePolicy = { name: "assistant", limit: 20, windowSeconds: 60 }

/**
 * Wrong PINs in a row after which a device's unlocking is disabled until a
 * manager sets a new PIN (NIST SP 800-63B limits failed attempts on an
 * activation secret).
 */
export const UNLOCK_DISABLED_AFTER = 10

/** The scopes a new device token carries when none are asked for. */
export const defaultDeviceScopes: ReadonlyArray<DeviceScope> = ["display:read", "display:assistant"]

/** The device as the API shows it: whether a PIN is set, never the PIN or its hash. */
export const presentDevice = (d: DeviceRecord): Device => ({
  id: d.id,
  name: d.name,
  location_id: d.location_id,
  locale: d.locale,
  pin_set: d.pin_hash !== null,
  unlock_disabled: d.unlock_disabled_at !== null,
  created_at: d.created_at,
  updated_at: d.updated_at
})

/** What a display waits before its next PIN attempt: nothing while attempts remain in the window. */
export const retryAfterSec = (decision: RateDecision): number => (decision.remaining > 0 ? 0 : decision.resetSeconds)
