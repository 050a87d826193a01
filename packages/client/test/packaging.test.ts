import { checkPackaging } from "@opsplatform/testing/packaging"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { expect, it } from "vitest"

const root = fileURLToPath(new URL("..", import.meta.url))

it("passes publint --strict and attw --pack, and loads by name in plain Node", async () => {
  // ESM only: Node 20.19 and later load it through require() as well.
  const report = await checkPackaging(root, { ignoreKinds: ["CJSResolvesToESM"] })
  expect(report.publint).toEqual([])
  expect(report.attw).toEqual([])
  expect(report.entrypoints).toEqual([".", "./package.json"])
  expect(report.exports).toEqual(expect.arrayContaining(["createClient", "ApiError", "NotFoundError", "ConnectionError", "isApiError"]))
}, 120_000)

it("packs the build and the manifest only, and depends on nothing but openapi-fetch", async () => {
  const { stdout } = await promisify(execFile)("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root })
  const paths = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path)
  expect(paths.filter((p) => !/^(dist\/[a-z]+\.(js|d\.ts)|package\.json|README\.md)$/i.test(p))).toEqual([])
  expect(paths).toEqual(expect.arrayContaining(["dist/index.js", "dist/index.d.ts", "dist/openapi.d.ts", "README.md"]))
  const manifest = (await import("../package.json", { with: { type: "json" } })).default as { dependencies: Record<string, string> }
  expect(Object.keys(manifest.dependencies)).toEqual(["openapi-fetch", "openapi-typescript-helpers"])
}, 60_000)
