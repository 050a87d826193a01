import { Cause, Context, Effect, Exit, Layer, Option, Redacted } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { type AuthModel, Credentials, Grants, type Scopes, Schemas } from "@opsplatform/core"
import {
  apiError,
  BadRequestError,
  ForbiddenError,
  fromDomain,
  NotFoundError,
  statusOfError,
  UnauthorizedError
} from "./errors.ts"
import { CurrentRequestId, RequestLogFacts } from "./requestContext.ts"
import { unavailableWhenDatabaseIs } from "./unavailable.ts"

/**
 * The caller of the current request, resolved from its bearer token. When a
 * cabinet's credential acts for a client, this is the client's organization
 * with the scopes the credential holds and the grant allows (`onBehalf` set),
 * so every handler works in the client's books.
 */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, AuthModel.Principal>()(
  "@opsplatform/http-node/CurrentPrincipal"
) {}

/** The scope an endpoint requires; read by the authentication middleware and the OpenAPI document. */
export class RequiredScope extends Context.Service<RequiredScope, Scopes.Scope>()("@opsplatform/http-node/RequiredScope") {}

export const bearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "An API key (`svc_key_`), personal token (`svc_pt_`), device token (`svc_dt_`) or OAuth access token (`svc_at_`). " +
      "An accountant's cabinet acts for a client that granted it access by adding `Opsplatform-Organization: <client organization id>`: " +
      "the request then runs in the client's books with the scopes the credential holds and the grant allows, and is written to the " +
      "client's audit log; without an active grant it answers 404 as for an unknown organization."
  )
)

export class Authentication extends HttpApiMiddleware.Service<Authentication, {
  provides: CurrentPrincipal
}>()("@opsplatform/http-node/Authentication", {
  security: { bearer },
  // 400 and 404 answer an `Opsplatform-Organization` header that is not an id, or names no client the credential may act for.
  error: [UnauthorizedError, ForbiddenError, NotFoundError, BadRequestError]
}) {}

/**
 * Any endpoint. Each endpoint type's `annotate` is generic over its own
 * parameters, so no single function type (short of `any`) accepts all of them.
 */
export type Annotatable = { annotate: (key: any, value: any) => any; annotateMerge: (context: any) => any }

/** Declares the scope of an endpoint (every /v1 endpoint has exactly one). */
export const scope = (required: Scopes.Scope) => <E extends Annotatable>(endpoint: E): E =>
  endpoint.annotate(RequiredScope, required).annotateMerge(
    OpenApi.annotations({ override: { "x-required-scope": required } })
  ) as E

const setHeader = (name: string, value: string) =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeader(response, name, value))
  )

/** The header a cabinet's credential names a client with, to act in the client's books (as `Stripe-Account`). */
export const ACT_FOR_HEADER = "opsplatform-organization"

const insufficientScope = (name: string) =>
  Effect.andThen(
    setHeader("www-authenticate", `Bearer realm="opsplatform", error="insufficient_scope", scope="${name}"`),
    Effect.flatMap(apiError(403, "insufficient_scope", `This credential lacks the scope '${name}'`), Effect.fail)
  )

/** How a request made for a client ended, for the client's audit log. */
const outcomeOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) => {
  const status = Exit.isSuccess(exit)
    ? exit.value.status
    : Option.match(Cause.findErrorOption(exit.cause), { onNone: () => 500, onSome: statusOfError })
  return { outcome: status < 400 ? "success" as const : "failure" as const, status }
}

export const AuthenticationLive: Layer.Layer<Authentication, never, Credentials.Credentials | Grants.Grants> = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const credentials = yield* Credentials.Credentials
    const grants = yield* Grants.Grants
    return Authentication.of({
      bearer: Effect.fn(function*(httpEffect, { credential, endpoint }) {
        const token = Redacted.value(credential)
        const principal = yield* credentials.authenticate(token).pipe(
          Effect.catchTag("Unauthorized", (e) =>
            Effect.flatMap(
              setHeader(
                "www-authenticate",
                token === "" ? `Bearer realm="opsplatform"` : `Bearer realm="opsplatform", error="invalid_token"`
              ),
              () =>
                Effect.flatMap(
                  apiError(
                    401,
                    "unauthorized",
                    token === "" ? "Send an API key or access token as 'Authorization: Bearer <token>'" : e.message
                  ),
                  Effect.fail
                )
            ))
        )
        const facts = yield* RequestLogFacts
        facts.credentialId = principal.credentialId
        facts.organizationId = principal.organizationId
        const required = Context.getOrUndefined(endpoint.annotations, RequiredScope) ?? "(none declared)"
        const request = yield* HttpServerRequest.HttpServerRequest
        const client = request.headers[ACT_FOR_HEADER]
        if (client === undefined || client === principal.organizationId) {
          if (!principal.scopes.has(required)) return yield* insufficientScope(required)
          return yield* Effect.provideService(httpEffect, CurrentPrincipal, principal)
        }
        // Acting for a client (decided: docs/decisions.md, "Accountant access grants").
        if (!Schemas.isUuid(client)) {
          return yield* Effect.flatMap(
            apiError(400, "validation_failed", "Opsplatform-Organization must be an organization id", {
              details: [{ field: "Opsplatform-Organization", issue: "must be an organization id (a UUID)" }]
            }),
            Effect.fail
          )
        }
        const onBehalf: Grants.OnBehalfRequest = {
          actor: { credentialId: principal.credentialId, organizationId: principal.organizationId, requestId: yield* CurrentRequestId },
          method: request.method,
          path: request.url.split("?")[0]!
        }
        const tenant = { organizationId: principal.organizationId, environment: principal.environment }
        const delegation = yield* grants.delegate(tenant, principal.scopes, client, onBehalf).pipe(
          Effect.catchTag("NotFound", (e) => Effect.flatMap(fromDomain(e), Effect.fail))
        )
        facts.organizationId = delegation.client.organizationId
        facts.actorOrganizationId = principal.organizationId
        if (!delegation.scopes.has(required as Scopes.Scope)) {
          yield* grants.recordOnBehalf(delegation, onBehalf, { outcome: "denied", status: 403 })
          return yield* insufficientScope(required)
        }
        const acting: AuthModel.Principal = {
          ...principal,
          organizationId: delegation.client.organizationId,
          scopes: delegation.scopes,
          onBehalf: { cabinetOrganizationId: principal.organizationId, grantId: delegation.grantId }
        }
        return yield* Effect.provideService(httpEffect, CurrentPrincipal, acting).pipe(
          Effect.onExit((exit) => grants.recordOnBehalf(delegation, onBehalf, outcomeOf(exit)))
        )
      }, unavailableWhenDatabaseIs)
    })
  })
)
