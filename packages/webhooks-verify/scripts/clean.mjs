// Builds start from an empty dist, so a module that no longer exists is never packed.
import { rmSync } from "node:fs"

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true })
