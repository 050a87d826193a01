import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ContractModel } from "@opsplatform/core"
import { NotFoundError } from "./errors.ts"
import { Envelope, ListEnvelope, idParam, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The contract id") }

export class ContractsApi extends HttpApiGroup.make("contracts")
  .add(
    HttpApiEndpoint.get("list", "/contracts", {
      query: pageQuery,
      success: ListEnvelope(ContractModel.Contract)
    }).pipe(scope("contracts:read")),
    HttpApiEndpoint.get("get", "/contracts/:id", {
      params: idParams,
      success: Envelope(ContractModel.Contract),
      error: NotFoundError
    }).pipe(scope("contracts:read")),
    HttpApiEndpoint.post("create", "/contracts", {
      payload: ContractModel.ContractCreate,
      success: Envelope(ContractModel.Contract).pipe(HttpApiSchema.status(201))
    }).pipe(scope("contracts:write")),
    HttpApiEndpoint.patch("update", "/contracts/:id", {
      params: idParams,
      payload: ContractModel.ContractUpdate,
      success: Envelope(ContractModel.Contract),
      error: NotFoundError
    }).pipe(scope("contracts:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Contracts",
    description: "The contracts obligations belong to. An obligation shows its contract's current name."
  }))
{}
