import { HttpApi, OpenApi } from "effect/http-api"
import { AuditApi } from "./Audit.ts"
import { ContactsApi } from "./Contacts.ts"
import { ContractsApi } from "./Contracts.ts"
import { DisplayApi } from "./Display.ts"
import { CostingApi } from "./Costing.ts"
import { CourtApi } from "./Court.ts"
import { ExpensesApi } from "./Expenses.ts"
import { FleetApi } from "./Fleet.ts"
import { GrantsApi } from "./Grants.ts"
import { FiscalApi } from "./Fiscal.ts"
import { InvoicesApi } from "./Invoices.ts"
import { LocationsApi } from "./Locations.ts"
import { MailApi } from "./Mail.ts"
import { MeteringApi } from "./Metering.ts"
import { OAuthApi } from "./OAuth.ts"
import { ObligationsApi } from "./Obligations.ts"
import { RoutesApi } from "./Routes.ts"
import { TenancyApi } from "./Tenancy.ts"
import { WebhooksApi } from "./Webhooks.ts"
import { Idempotency } from "./idempotency.ts"
import { SchemaErrors } from "./schemaErrors.ts"
import { Authentication } from "./security.ts"
import { ImportsApi } from "./Imports.ts"
import { RequestBody } from "./requestBody.ts"
import { StrictQuery } from "./strictQuery.ts"

/**
 * Moves each operation's declared scope into its security requirement and its
 * description, so the document and the docs page say which scope every
 * operation needs.
 */
const scopesIntoSecurity = <Spec extends { paths?: object; openapi?: string }>(spec: Spec): Spec => {
  for (const item of Object.values(spec.paths ?? {}) as Array<Record<string, unknown>>) {
    for (const op of Object.values(item)) {
      if (typeof op === "object" && op !== null && "x-required-scope" in op && typeof op["x-required-scope"] === "string") {
        const scope = op["x-required-scope"]
        // Swagger UI shows neither security scopes nor extensions per operation: the description names the scope.
        const description = "description" in op && typeof op.description === "string" ? `${op.description}\n\n` : ""
        Object.assign(op, { security: [{ bearer: [scope] }], description: `${description}Requires the scope \`${scope}\`.` })
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
  .add(TenancyApi)
  .add(RoutesApi)
  .add(CostingApi)
  .add(OAuthApi)
  .add(WebhooksApi)
  .add(ContactsApi)
  .add(InvoicesApi)
  .add(AuditApi)
  .add(FleetApi)
  .add(CourtApi)
  .add(GrantsApi)
  .add(FiscalApi)
  .add(MailApi)
  .add(DisplayApi)
  .add(MeteringApi)
  .add(ImportsApi)
  .middleware(SchemaErrors)
  .middleware(Idempotency)
  // Inside Authentication (added after it wraps it): the body is read only once the credential and scope are known.
  .middleware(RequestBody)
  .middleware(Authentication)
  .middleware(StrictQuery)
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
