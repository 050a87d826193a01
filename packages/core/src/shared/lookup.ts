import { Effect, Option } from "effect"
import { NotFound } from "./errors.ts"
import { isUuid } from "./schemas.ts"

/**
 * The one lookup of a resource by id: what `find` returns, or NotFound. A
 * malformed id can exist nowhere, so it is NotFound without a query (a host
 * calling core with one gets the same answer as for an unknown id).
 */
export const findOr404 = <A, E, R>(
  resource: string,
  id: string,
  find: (id: string) => Effect.Effect<Option.Option<A>, E, R>
): Effect.Effect<A, E | NotFound, R> =>
  (isUuid(id) ? find(id) : Effect.succeedNone).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new NotFound({ resource, id })),
      onSome: Effect.succeed
    }))
  )
