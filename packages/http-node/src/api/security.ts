import { Context, Effect, Layer, Redacted } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { type AuthModel, Credentials, type Scopes } from "@opsplatform/core"
import { apiError, ForbiddenError, UnauthorizedError } from "./errors.ts"
import { RequestLogFacts } from "./requestContext.ts"

/** The caller of the current request, resolved from its bearer token. */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, AuthModel.Principal>()(
  "@opsplatform/http-node/CurrentPrincipal"
) {}

/** The scope an endpoint requires; read by the authentication middleware and the OpenAPI document. */
export class RequiredScope extends Context.Service<RequiredScope, Scopes.Scope>()("@opsplatform/http-node/RequiredScope") {}

export const bearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "An API key (`svc_key_`), personal token (`svc_pt_`), device token (`svc_dt_`) or OAuth access token (`svc_at_`)")
)

export class Authentication extends HttpApiMiddleware.Service<Authentication, {
  provides: CurrentPrincipal
}>()("@opsplatform/http-node/Authentication", {
  security: { bearer },
  error: [UnauthorizedError, ForbiddenError]
}) {}

/** Declares the scope of an endpoint (every /v1 endpoint has exactly one). */
export const scope = (required: Scopes.Scope) => <E extends { annotate: (key: any, value: any) => any; annotateMerge: (c: any) => any }>(
  endpoint: E
): E =>
  endpoint.annotate(RequiredScope, required).annotateMerge(
    OpenApi.annotations({ override: { "x-required-scope": required } })
  ) as E

const setHeader = (name: string, value: string) =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeader(response, name, value))
  )

export const AuthenticationLive: Layer.Layer<Authentication, never, Credentials.Credentials> = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const credentials = yield* Credentials.Credentials
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
        const required = Context.getOrUndefined(endpoint.annotations, RequiredScope)
        if (required === undefined || !principal.scopes.has(required)) {
          const name = required ?? "(none declared)"
          yield* setHeader("www-authenticate", `Bearer realm="opsplatform", error="insufficient_scope", scope="${name}"`)
          return yield* Effect.flatMap(
            apiError(403, "insufficient_scope", `This credential lacks the scope '${name}'`),
            Effect.fail
          )
        }
        return yield* Effect.provideService(httpEffect, CurrentPrincipal, principal)
      })
    })
  })
)
