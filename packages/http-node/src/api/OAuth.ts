import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { OAuthModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { carriesSecret } from "./idempotency.ts"
import { scope } from "./security.ts"

const appId = { id: idParam("The app id (not its client_id)") }
const installationId = { installationId: idParam("The installation id") }
const Deleted = Envelope(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }))

export class OAuthApi extends HttpApiGroup.make("oauth")
  .add(
    HttpApiEndpoint.get("list", "/apps", {
      query: pageQuery,
      success: ListEnvelope(OAuthModel.OAuthApp)
    }).pipe(scope("apps:read")),
    HttpApiEndpoint.post("create", "/apps", {
      payload: OAuthModel.AppCreate,
      success: Envelope(OAuthModel.OAuthAppWithSecret).pipe(HttpApiSchema.status(201))
    }).pipe(scope("apps:write"), carriesSecret),
    HttpApiEndpoint.get("get", "/apps/:id", {
      params: appId,
      success: Envelope(OAuthModel.OAuthApp),
      error: NotFoundError
    }).pipe(scope("apps:read")),
    HttpApiEndpoint.patch("update", "/apps/:id", {
      params: appId,
      payload: OAuthModel.AppUpdate,
      success: Envelope(OAuthModel.OAuthApp),
      error: NotFoundError
    }).pipe(scope("apps:write")),
    HttpApiEndpoint.delete("remove", "/apps/:id", {
      params: appId,
      success: Deleted,
      error: NotFoundError
    }).pipe(scope("apps:write")),
    HttpApiEndpoint.post("rotateSecret", "/apps/:id/rotate-secret", {
      params: appId,
      success: Envelope(OAuthModel.OAuthAppWithSecret),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("apps:write"), carriesSecret),
    HttpApiEndpoint.get("listInstallations", "/app-installations", {
      query: pageQuery,
      success: ListEnvelope(OAuthModel.Installation)
    }).pipe(scope("apps:read")),
    HttpApiEndpoint.post("install", "/app-installations", {
      payload: OAuthModel.InstallationCreate,
      success: Envelope(OAuthModel.Installation).pipe(HttpApiSchema.status(201)),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("apps:write")),
    HttpApiEndpoint.get("getInstallation", "/app-installations/:installationId", {
      params: installationId,
      success: Envelope(OAuthModel.Installation),
      error: NotFoundError
    }).pipe(scope("apps:read")),
    HttpApiEndpoint.delete("uninstall", "/app-installations/:installationId", {
      params: installationId,
      success: Deleted,
      error: NotFoundError
    }).pipe(scope("apps:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "OAuth apps",
    description: "OAuth 2.0 apps this organization environment registered, and the apps installed in it. " +
      "An app belongs to the environment that registered it; any organization environment may install it " +
      "(what client_credentials reaches) or let its members consent to it on the consent page. " +
      "Uninstalling revokes every token the app holds in the environment. The client secret is shown once, " +
      "at registration and at each rotation."
  }))
{}
