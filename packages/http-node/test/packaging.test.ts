import { execFile } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { publint } from "publint"
import { beforeAll, describe, expect, it } from "vitest"

/**
 * What a user installs: the manifest, the files `npm pack` takes, and the
 * built entry point. Runs on the build, as the CLI tests do.
 */

const run = promisify(execFile)
const root = fileURLToPath(new URL("..", import.meta.url))
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))

beforeAll(() => {
  for (const built of ["dist/index.js", "dist/index.d.ts", "dist/cli/main.js"]) {
    if (!existsSync(join(root, built))) throw new Error(`${built} is missing: run \`npx tsc -b\` first`)
  }
})

describe("the manifest", () => {
  it("exports the entry point and the API contract (`./api`), types first, and the bin", () => {
    expect(Object.keys(manifest.exports)).toEqual([".", "./api", "./package.json"])
    expect(Object.keys(manifest.exports["."])[0]).toBe("types")
    expect(Object.keys(manifest.exports["./api"])[0]).toBe("types")
    expect(manifest.exports["./api"].default).toBe("./dist/api/index.js")
    expect(manifest.exports["."].default).toBe("./dist/index.js")
    expect(manifest.types).toBe("./dist/index.d.ts")
    expect(manifest.bin).toEqual({ opsplatform: "./bin/opsplatform.js" })
  })
})

describe("the built entry point", () => {
  it("loads in plain Node by the package's name and exports the public surface, nothing else", async () => {
    const { stdout } = await run(process.execPath, [
      "--input-type=module",
      "-e",
      `const entry = await import("${manifest.name}"); console.log(JSON.stringify(Object.keys(entry).sort()))`
    ], { cwd: root })
    expect(JSON.parse(stdout)).toEqual(
      ["Api", "AppRoutes", "apiMiddleware", "coreLive", "databaseChoiceFromEnv", "makeWebHandler", "serverLayer"]
    )
  })
})

describe("the published package", () => {
  it("packs the build, the sources the source maps name, the bin, the manifest and the README, and no tests", async () => {
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root })
    const [packed] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>
    const paths = packed!.files.map((f) => f.path)
    for (const required of ["package.json", "bin/opsplatform.js", "dist/index.js", "dist/index.d.ts", "dist/cli/main.js", "src/index.ts"]) {
      expect(paths).toContain(required)
    }
    expect(paths.filter((p) => !/^(dist\/|src\/|bin\/opsplatform\.js$|package\.json$|README\.md$)/.test(p))).toEqual([])
    expect(paths.filter((p) => p.endsWith(".tsbuildinfo"))).toEqual([])
  })

  it("passes publint, strict", async () => {
    const { messages } = await publint({ pkgDir: root, strict: true, level: "suggestion" })
    expect(messages).toEqual([])
  })

  it("passes arethetypeswrong in every module resolution but require() from CommonJS", async () => {
    // The package is ESM only because @opsplatform/core, which it re-exports, is ESM only. Its engines
    // (Node >= 22.19) load ESM through require() anyway, but TypeScript's node16 resolution from CommonJS
    // still reports it; that one rule is ignored, and the assertion below keeps it the only problem.
    const { code, stdout } = await run(
      "npx",
      ["attw", "--pack", ".", "--format", "json", "--ignore-rules", "cjs-resolves-to-esm"],
      { cwd: root }
    ).then((r) => ({ ...r, code: 0 }), (e) => ({ code: e.code as number, stdout: e.stdout as string }))
    const report = JSON.parse(stdout) as {
      analysis: { problems: Array<{ kind: string; resolutionKind?: string }>; entrypoints: Record<string, unknown> }
    }
    expect(code).toBe(0)
    expect(report.analysis.problems).toEqual([
      { kind: "CJSResolvesToESM", entrypoint: ".", resolutionKind: "node16-cjs" },
      { kind: "CJSResolvesToESM", entrypoint: "./api", resolutionKind: "node16-cjs" }
    ])
    expect(Object.keys(report.analysis.entrypoints)).toEqual([".", "./api", "./package.json"])
  })
})
