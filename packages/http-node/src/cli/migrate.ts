import { Effect, Ref } from "effect"
import { Command } from "effect/cli"
import { Migrations } from "@opsplatform/core"
import { layerSql } from "../server/database.ts"
import { type Progress, progressBar } from "./progress.ts"
import { commandDatabase, printJson } from "./shared.ts"

export const migrate = Command.make("migrate", {}, () =>
  Effect.flatMap(commandDatabase, (database) => Effect.gen(function*() {
    const bar = yield* Ref.make<Progress | undefined>(undefined)
    const applied = yield* Migrations.migrateWith({
      onStart: (pending) => Ref.set(bar, progressBar("migrate", pending.length)),
      onApplied: (migration) => Effect.flatMap(Ref.get(bar), (p) => p?.advance(1, migration) ?? Effect.void)
    }).pipe(Effect.ensuring(Effect.flatMap(Ref.get(bar), (p) => p?.done ?? Effect.void)))
    yield* printJson({ applied: applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`) })
  }).pipe(Effect.provide(layerSql(database))))).pipe(
    Command.withDescription("Apply pending database migrations (a progress bar on stderr when it is a terminal)")
  )
