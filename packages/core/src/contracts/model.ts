import { Schema } from "effect"
import { IsoDateTime, NonBlankString } from "../shared/schemas.ts"

/**
 * A contract, as far as obligations need one: an id and a name. Obligations
 * read the name when they are read, so a renamed contract shows its new name
 * everywhere at once.
 */
export const Contract = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "Contract" })
export type Contract = typeof Contract.Type

const ContractName = NonBlankString(200)

export const ContractCreate = Schema.Struct({ name: ContractName }).annotate({ identifier: "ContractCreate" })
export type ContractCreate = typeof ContractCreate.Type

export const ContractUpdate = Schema.Struct({ name: Schema.optionalKey(ContractName) }).annotate({
  identifier: "ContractUpdate"
})
export type ContractUpdate = typeof ContractUpdate.Type
