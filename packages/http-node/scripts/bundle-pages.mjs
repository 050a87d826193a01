// Bundles the pages' browser scripts at build time (no CDN, nothing fetched at run time):
// src/portal/client/portal.ts → dist/assets/portal.js, read by the portal's routes.
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

await build({
  absWorkingDir: root,
  entryPoints: { portal: "src/portal/client/portal.ts" },
  outdir: "dist/assets",
  bundle: true,
  minify: true,
  format: "esm",
  platform: "browser",
  target: ["chrome120", "firefox120", "safari16"],
  legalComments: "none",
  logLevel: "warning"
})
