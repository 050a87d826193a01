import { Context, Effect, Layer, Option } from "effect"
import { Audit } from "../audit/Audit.ts"
import type { AuditEntry, AuditOutcome } from "../audit/model.ts"
import type { Scope } from "../auth/scopes.ts"
import { Conflict, InvalidTransition, NotFound, ValidationFailed } from "../shared/errors.ts"
import { invalidCuiIssue, normalizeCui } from "../shared/identifiers.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { isUuid } from "../shared/schemas.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import { GrantRepo } from "./GrantRepo.ts"
import {
  type AccessGrant,
  type AccessGrantCreate,
  type AccessGrantFilter,
  AccessGrantId,
  type AccessGrantRecord,
  type GrantActor,
  type GrantRole
} from "./model.ts"
import { effectiveScopes, grantLifecycle, otherSide, revocationAction, sideOf, viewOf } from "./rules.ts"

/** A cabinet's credential acting for a client through an active grant. */
export interface Delegation {
  readonly grantId: AccessGrantId
  /** The client's books, in the credential's environment. */
  readonly client: Tenant
  /** The credential's scopes that the grant allows. */
  readonly scopes: ReadonlySet<Scope>
}

/** One request a cabinet makes, or tries to make, for a client: what the client's audit log records. */
export interface OnBehalfRequest {
  readonly actor: GrantActor
  readonly method: string
  readonly path: string
}

/** The audit action of every request made (or refused) for a client. */
export const ON_BEHALF_ACTION = "request.on_behalf"

/**
 * Accountant access grants between a cabinet and its client organizations,
 * and the one check that lets a cabinet's credential act for a client. Every
 * step is written to the audit log of each side it concerns, in the same
 * transaction as the change.
 */
export class Grants extends Context.Service<Grants, {
  /** Asks for a grant from the caller's side; the VAT number names the other side. */
  readonly request: (tenant: Tenant, actor: GrantActor, input: AccessGrantCreate) => Effect.Effect<AccessGrant, ValidationFailed | Conflict>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<AccessGrant, NotFound>
  readonly list: (tenant: Tenant, filter: AccessGrantFilter, page: PageRequest) => Effect.Effect<Page<AccessGrant>>
  /** Only the side that was asked approves. */
  readonly approve: (tenant: Tenant, actor: GrantActor, id: string) => Effect.Effect<AccessGrant, NotFound | InvalidTransition | Conflict>
  /** Either side ends a pending or an active grant. */
  readonly revoke: (tenant: Tenant, actor: GrantActor, id: string) => Effect.Effect<AccessGrant, NotFound | InvalidTransition>
  /**
   * Lets the caller (the cabinet's tenant) act for a client: the active grant
   * between them in the caller's environment, read from the store on every
   * call so a revocation holds from the next request in every process. Without
   * one it is NotFound for the client's id, exactly as an unknown organization;
   * a refusal where a grant exists (pending or revoked) is written to the
   * client's audit log.
   */
  readonly delegate: (
    tenant: Tenant,
    heldScopes: Iterable<string>,
    clientOrganizationId: string,
    request: OnBehalfRequest
  ) => Effect.Effect<Delegation, NotFound>
  /** Writes one request made for a client to the client's audit log, with the cabinet as the actor. */
  readonly recordOnBehalf: (
    delegation: Delegation,
    request: OnBehalfRequest,
    result: { readonly outcome: AuditOutcome; readonly status: number }
  ) => Effect.Effect<void>
}>()("@opsplatform/core/grants/Grants") {
  static readonly layer: Layer.Layer<Grants, never, GrantRepo | TenancyRepo | Audit | Ids | Transactor> = Layer.effect(
    Grants,
    Effect.gen(function*() {
      const repo = yield* GrantRepo
      const tenancy = yield* TenancyRepo
      const audit = yield* Audit
      const ids = yield* Ids
      const tx = yield* Transactor

      const find = (tenant: Tenant, id: string, forUpdate = false) =>
        findOr404("access grant", id, (id) => repo.find(tenant, id, { forUpdate })).pipe(
          Effect.map((grant) => ({ grant, side: sideOf(grant, tenant.organizationId)! }))
        )

      /** The same entry in the log of each side the grant has (an unknown VAT number has no second side). */
      const recordOnBothSides = (grant: AccessGrantRecord, actor: GrantActor, action: string, side: GrantRole) =>
        Effect.forEach(
          [grant.cabinet_organization_id, grant.client_organization_id],
          (organizationId) =>
            organizationId === null ? Effect.void : audit.record({ organizationId, environment: grant.environment }, {
              action,
              outcome: "success",
              actor_credential_id: actor.credentialId,
              actor_organization_id: actor.organizationId,
              resource_type: "access_grant",
              resource_id: grant.id,
              device_id: null,
              request_id: actor.requestId,
              details: { side, scope: grant.scope, status: grant.status }
            }),
          { discard: true }
        )

      const onBehalfEntry = (
        grantId: string,
        request: OnBehalfRequest,
        outcome: AuditOutcome,
        details: AuditEntry["details"]
      ): AuditEntry => ({
        action: ON_BEHALF_ACTION,
        outcome,
        actor_credential_id: request.actor.credentialId,
        actor_organization_id: request.actor.organizationId,
        resource_type: "access_grant",
        resource_id: grantId,
        device_id: null,
        request_id: request.actor.requestId,
        details: { method: request.method, path: request.path, ...details }
      })

      return Grants.of({
        request: Effect.fn("Grants.request")(function*(tenant, actor, input) {
          const vatNumber = normalizeCui(input.counterparty_vat_number)
          if (vatNumber === undefined) return yield* ValidationFailed.field("counterparty_vat_number", invalidCuiIssue)
          const self = yield* tenancy.findOrganization(tenant.organizationId)
          if (Option.isSome(self) && self.value.vat_number === vatNumber) {
            return yield* ValidationFailed.field("counterparty_vat_number", "is your own organization's VAT number")
          }
          const counterparty = Option.getOrNull(yield* tenancy.findOrganizationByVatNumber(vatNumber))
          const mine = { id: tenant.organizationId, name: Option.getOrNull(self)?.name ?? null, vat: Option.getOrNull(self)?.vat_number ?? null }
          const theirs = { id: counterparty?.id ?? null, name: counterparty?.name ?? null, vat: counterparty?.vat_number ?? null }
          const [cabinet, client] = input.role === "cabinet" ? [mine, theirs] : [theirs, mine]
          const grant: AccessGrantRecord = {
            id: yield* newId(ids, AccessGrantId),
            environment: tenant.environment,
            cabinet_organization_id: cabinet.id,
            client_organization_id: client.id,
            requested_by: input.role,
            requested_vat_number: vatNumber,
            status: "pending",
            scope: input.scope ?? "read",
            created_at: yield* nowIso,
            approved_at: null,
            revoked_at: null,
            cabinet_name: cabinet.name,
            cabinet_vat_number: cabinet.vat,
            client_name: client.name,
            client_vat_number: client.vat
          }
          return yield* tx.withTransaction(Effect.gen(function*() {
            yield* repo.insert(tenant, grant)
            yield* recordOnBothSides(grant, actor, "grant.request", input.role)
            return viewOf(grant, input.role)
          }))
        }),
        get: (tenant, id) => Effect.map(find(tenant, id), ({ grant, side }) => viewOf(grant, side)),
        list: (tenant, filter, page) =>
          Effect.map(repo.list(tenant, filter, page), (p) => ({
            ...p,
            items: p.items.map((grant) => viewOf(grant, sideOf(grant, tenant.organizationId)!))
          })),
        approve: Effect.fn("Grants.approve")(function*(tenant, actor, id) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const { grant, side } = yield* find(tenant, id, true)
            const to = grantLifecycle.target(grant.status, "approve")
            if (to === undefined) return yield* new InvalidTransition({ resource: "access grant", from: grant.status, to: "active" })
            if (grant.requested_by === side) {
              return yield* new Conflict({
                reason: `This grant was asked for by your organization; the ${otherSide(side)} approves it`
              })
            }
            const approved: AccessGrantRecord = { ...grant, status: to, approved_at: yield* nowIso }
            yield* repo.update(tenant, approved)
            yield* recordOnBothSides(approved, actor, "grant.approve", side)
            return viewOf(approved, side)
          }))
        }),
        revoke: Effect.fn("Grants.revoke")(function*(tenant, actor, id) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const { grant, side } = yield* find(tenant, id, true)
            const to = grantLifecycle.target(grant.status, "revoke")
            if (to === undefined) return yield* new InvalidTransition({ resource: "access grant", from: grant.status, to: "revoked" })
            const revoked: AccessGrantRecord = { ...grant, status: to, revoked_at: yield* nowIso }
            yield* repo.update(tenant, revoked)
            yield* recordOnBothSides(revoked, actor, revocationAction(grant, side), side)
            return viewOf(revoked, side)
          }))
        }),
        delegate: Effect.fn("Grants.delegate")(function*(tenant, heldScopes, clientOrganizationId, request) {
          const unknown = new NotFound({ resource: "organization", id: clientOrganizationId })
          if (!isUuid(clientOrganizationId)) return yield* unknown
          const found = yield* repo.findForClient(tenant, clientOrganizationId)
          if (Option.isNone(found)) return yield* unknown
          const grant = found.value
          const client: Tenant = { organizationId: clientOrganizationId, environment: tenant.environment }
          if (grant.status !== "active") {
            yield* audit.record(client, onBehalfEntry(grant.id, request, "denied", { status: 404, grant_status: grant.status }))
            return yield* unknown
          }
          return { grantId: grant.id, client, scopes: effectiveScopes(heldScopes, grant.scope) }
        }),
        recordOnBehalf: (delegation, request, result) =>
          Effect.asVoid(audit.record(delegation.client, onBehalfEntry(delegation.grantId, request, result.outcome, { status: result.status })))
      })
    })
  )
}
