// dist/cjs holds CommonJS under a "type": "module" package; this marker makes
// Node and TypeScript read its .js and .d.ts files as CommonJS.
import { writeFileSync } from "node:fs"

writeFileSync(new URL("../dist/cjs/package.json", import.meta.url), JSON.stringify({ type: "commonjs" }) + "\n")
