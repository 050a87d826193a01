import { Context, Effect, Layer, Option } from "effect"
import { Credentials } from "../auth/Credentials.ts"
import { LocationRepo } from "../locations/LocationRepo.ts"
import { type HashingBusy, NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { isUuid } from "../shared/schemas.ts"
import { PasswordHashing } from "../shared/PasswordHashing.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { DeviceRepo } from "./DeviceRepo.ts"
import {
  type Device,
  type DeviceCreate,
  type DeviceFilter,
  DeviceId,
  type DeviceRecord,
  type DeviceScope,
  type DeviceToken,
  type DeviceUpdate,
  type RotateToken
} from "./model.ts"
import { defaultDeviceScopes, presentDevice } from "./rules.ts"

const PIN = /^\d{4,8}$/

/**
 * Wall displays and their credentials: a device is registered with its first
 * token (shown once), its token can be rotated, and its PIN is set, changed or
 * cleared by a manager. PINs are stored only as salted, stretched hashes
 * (`PasswordHashing`: Argon2id, a random salt per hash; docs/decisions.md).
 */
export class Devices extends Context.Service<Devices, {
  readonly create: (tenant: Tenant, input: DeviceCreate) => Effect.Effect<DeviceToken, NotFound | ValidationFailed>
  readonly list: (tenant: Tenant, filter: DeviceFilter, page: PageRequest) => Effect.Effect<Page<Device>>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Device, NotFound>
  readonly update: (tenant: Tenant, id: string, patch: DeviceUpdate) => Effect.Effect<Device, NotFound | ValidationFailed>
  /** Deletes the device and revokes its tokens; its audit trail stays. */
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound>
  /** Revokes the device's tokens and issues a new one (by default with the scopes the newest revoked one had). */
  readonly rotateToken: (tenant: Tenant, id: string, input: RotateToken) => Effect.Effect<DeviceToken, NotFound>
  /** Sets a new PIN; this also ends a lockout after too many wrong PINs. */
  readonly setPin: (tenant: Tenant, id: string, pin: string) => Effect.Effect<Device, NotFound | ValidationFailed | HashingBusy>
  readonly clearPin: (tenant: Tenant, id: string) => Effect.Effect<Device, NotFound>
}>()("@opsplatform/core/display/Devices") {
  static readonly layer: Layer.Layer<
    Devices,
    never,
    DeviceRepo | LocationRepo | Credentials | Ids | Transactor | PasswordHashing
  > = Layer.effect(
    Devices,
    Effect.gen(function*() {
      const repo = yield* DeviceRepo
      const locations = yield* LocationRepo
      const credentials = yield* Credentials
      const ids = yield* Ids
      const tx = yield* Transactor
      const hashing = yield* PasswordHashing

      const find = (tenant: Tenant, id: string) => findOr404("device", id, (id) => repo.find(tenant, id))
      const checkLocation = (tenant: Tenant, locationId: string | null | undefined) =>
        locationId === null || locationId === undefined
          ? Effect.void
          : Effect.asVoid(findOr404("location", locationId, (id) => locations.find(tenant, id)))

      const issue = (tenant: Tenant, device: DeviceRecord, scopes: ReadonlyArray<DeviceScope>) =>
        credentials.issue(tenant, { kind: "device", scopes, deviceId: device.id, name: device.name }).pipe(
          // The device was found or written in this same transaction and the scopes are display scopes.
          Effect.orDie,
          Effect.map((issued): DeviceToken => ({
            device: presentDevice(device),
            credential_id: issued.credential.id,
            token: issued.token,
            scopes: issued.credential.scopes as ReadonlyArray<DeviceScope>
          }))
        )

      const changePin = (tenant: Tenant, id: string, hash: string | null) =>
        Effect.gen(function*() {
          if (!isUuid(id) || !(yield* repo.setPin(tenant, id, hash, yield* nowIso))) {
            return yield* new NotFound({ resource: "device", id })
          }
          return presentDevice(yield* find(tenant, id))
        })

      return Devices.of({
        create: Effect.fn("Devices.create")(function*(tenant, input) {
          yield* checkLocation(tenant, input.location_id)
          const now = yield* nowIso
          const device: DeviceRecord = {
            id: yield* newId(ids, DeviceId),
            name: input.name.trim(),
            location_id: input.location_id ?? null,
            locale: input.locale ?? "ro",
            pin_hash: null,
            failed_pin_attempts: 0,
            unlock_disabled_at: null,
            deleted_at: null,
            created_at: now,
            updated_at: now
          }
          return yield* tx.withTransaction(Effect.gen(function*() {
            yield* repo.insert(tenant, device)
            return yield* issue(tenant, device, input.scopes ?? defaultDeviceScopes)
          }))
        }),
        list: (tenant, filter, page) =>
          repo.list(tenant, filter, page).pipe(Effect.map((p) => ({ ...p, items: p.items.map(presentDevice) }))),
        get: (tenant, id) => Effect.map(find(tenant, id), presentDevice),
        update: Effect.fn("Devices.update")(function*(tenant, id, patch) {
          const current = yield* find(tenant, id)
          yield* checkLocation(tenant, patch.location_id)
          const next: DeviceRecord = {
            ...current,
            name: patch.name === undefined ? current.name : patch.name.trim(),
            location_id: patch.location_id === undefined ? current.location_id : patch.location_id,
            locale: patch.locale ?? current.locale,
            updated_at: yield* nowIso
          }
          if (!(yield* repo.update(tenant, next))) return yield* new NotFound({ resource: "device", id })
          return presentDevice(next)
        }),
        remove: Effect.fn("Devices.remove")(function*(tenant, id) {
          yield* tx.withTransaction(Effect.gen(function*() {
            if (!isUuid(id) || !(yield* repo.remove(tenant, id, yield* nowIso))) {
              return yield* new NotFound({ resource: "device", id })
            }
            yield* credentials.revokeDevice(tenant, id)
          }))
        }),
        rotateToken: Effect.fn("Devices.rotateToken")(function*(tenant, id, input) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const device = yield* find(tenant, id)
            const revoked = yield* credentials.revokeDevice(tenant, device.id)
            const newest = Option.fromNullishOr([...revoked].sort((a, b) => b.created_at.localeCompare(a.created_at))[0])
            const previous = Option.match(newest, {
              onNone: () => defaultDeviceScopes,
              onSome: (c) => c.scopes.filter((s): s is DeviceScope => defaultDeviceScopes.includes(s as DeviceScope))
            })
            return yield* issue(tenant, device, input.scopes ?? (previous.length > 0 ? previous : defaultDeviceScopes))
          }))
        }),
        setPin: Effect.fn("Devices.setPin")(function*(tenant, id, pin) {
          if (!PIN.test(pin)) return yield* ValidationFailed.field("pin", "must be 4 to 8 digits")
          yield* find(tenant, id)
          const hash = yield* hashing.hash(pin)
          return yield* changePin(tenant, id, hash)
        }),
        clearPin: (tenant, id) => changePin(tenant, id, null)
      })
    })
  )
}
