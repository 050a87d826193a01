import { Command } from "effect/cli"
import { admin } from "./admin.ts"
import { doctor } from "./doctor.ts"
import { importCommand } from "./imports.ts"
import { jobs } from "./jobs.ts"
import { migrate } from "./migrate.ts"
import { serve } from "./serve.ts"
import { worker } from "./worker.ts"

/** Every command of the `opsplatform` CLI; each answers `--help`. */
export const opsplatform = Command.make("opsplatform").pipe(
  Command.withDescription("Operations Platform: the /v1 API server and its operator tools"),
  Command.withSubcommands([serve, worker, migrate, doctor, admin, jobs, importCommand])
)
