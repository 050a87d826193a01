import { Schema, Struct } from "effect"
import { IsoDateTime, NonBlankString, Uuid } from "../shared/schemas.ts"

export const ContractId = Uuid.pipe(Schema.brand("ContractId"))
export type ContractId = typeof ContractId.Type

/**
 * A contract, as far as obligations need one: an id and a name. Obligations
 * read the name when they are read, so a renamed contract shows its new name
 * everywhere at once.
 */
export const Contract = Schema.Struct({
  id: ContractId,
  name: NonBlankString(200),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "Contract" })
export type Contract = typeof Contract.Type

/** What a caller may set: the name. */
const Editable = Contract.mapFields(Struct.pick(["name"]))

export const ContractCreate = Editable.annotate({ identifier: "ContractCreate" })
export type ContractCreate = typeof ContractCreate.Type

export const ContractUpdate = Editable.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "ContractUpdate" })
export type ContractUpdate = typeof ContractUpdate.Type
