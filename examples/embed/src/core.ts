/**
 * Using the domain from a plain script: core's services on the in-memory
 * storage layers. Swap `MemoryCore()` for the SQL layers (`postgres.ts`) or
 * your own implementations of the storage ports and nothing else changes.
 */
import { Effect } from "effect"
import { MemoryCore } from "@opsplatform/testing"
import { useCore } from "./program.ts"

export const program = useCore.pipe(Effect.provide(MemoryCore()))

if (import.meta.url === `file://${process.argv[1]}`) {
  Effect.runPromise(program).then((result) => console.log(JSON.stringify(result, null, 2)))
}
