import { HttpApi, OpenApi } from "effect/http-api"
import { AppsApi } from "./Apps.ts"
import { ContractsApi } from "./Contracts.ts"
import { CostingSettingsApi, DeliveryRoutesApi } from "./DeliveryRoutes.ts"
import { ExpensesApi } from "./Expenses.ts"
import { LocationsApi } from "./Locations.ts"
import { ObligationsApi } from "./Obligations.ts"
import { OrganizationApi } from "./Organization.ts"
import { WebhooksApi } from "./Webhooks.ts"
import { Idempotency } from "./idempotency.ts"
import { SchemaErrors } from "./schemaErrors.ts"
import { Authentication } from "./security.ts"

/**
 * Moves each operation's declared scope into its security requirement, so the
 * document says which scope every operation needs.
 */
const scopesIntoSecurity = (spec: Record<string, any>): Record<string, any> => {
  for (const item of Object.values<any>(spec.paths ?? {})) {
    for (const op of Object.values<any>(item)) {
      if (op && typeof op === "object" && typeof op["x-required-scope"] === "string") {
        op.security = [{ bearer: [op["x-required-scope"]] }]
      }
    }
  }
  spec.openapi = "3.1.0"
  return spec
}

export class Api extends HttpApi.make("opsplatform")
  .add(LocationsApi)
  .add(ExpensesApi)
  .add(ContractsApi)
  .add(ObligationsApi)
  .add(OrganizationApi)
  .add(DeliveryRoutesApi)
  .add(CostingSettingsApi)
  .add(AppsApi)
  .add(WebhooksApi)
  .middleware(SchemaErrors)
  .middleware(Idempotency)
  .middleware(Authentication)
  .prefix("/v1")
  .annotate(HttpApi.QueryParseOptions, { errors: "all", onExcessProperty: "error" })
  .annotate(HttpApi.PayloadParseOptions, { errors: "all", onExcessProperty: "error" })
  .annotate(HttpApi.ParamsParseOptions, { errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "Operations Platform API",
    version: "1.0.0",
    description:
      "JSON over HTTP. Every response is an envelope `{ data, error, meta? }`; errors carry `{ code, message, details?, requestId }`. " +
      "Authenticate with `Authorization: Bearer <token>`; each operation names the scope it needs.",
    transform: scopesIntoSecurity
  }))
{}
