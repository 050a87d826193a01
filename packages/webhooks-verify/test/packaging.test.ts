import { execFile } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { publint } from "publint"
import { describe, expect, it } from "vitest"
import { body, eventId, now, secret, signedHeaders } from "./support.ts"

/**
 * What a user installs: the manifest, the files `npm pack` takes, and the
 * built entry points as Node resolves them.
 */

const run = promisify(execFile)
const root = fileURLToPath(new URL("..", import.meta.url))
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]
  )

/** Every module specifier a built file imports or requires. */
const specifiersOf = (file: string): Array<string> =>
  [...readFileSync(file, "utf8").matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"']+)["']/g)].map((m) => m[1]!)

/** The files an entry loads, following relative imports (of declarations too). */
const graphOf = (entry: string): Map<string, Array<string>> => {
  const graph = new Map<string, Array<string>>()
  const visit = (file: string) => {
    if (graph.has(file)) return
    const specifiers = specifiersOf(file)
    graph.set(file, specifiers)
    for (const s of specifiers) {
      if (s.startsWith(".")) visit(join(dirname(file), file.endsWith(".d.ts") ? s.replace(/\.(ts|js)$/, ".d.ts") : s))
    }
  }
  visit(entry)
  return graph
}

describe("the manifest", () => {
  it("has no runtime dependencies of any kind and supports Node 18", () => {
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies", "bundleDependencies"]) {
      expect(manifest[field], field).toBeUndefined()
    }
    expect(manifest.engines).toEqual({ node: ">=18" })
  })

  it("lists types first in every condition of exports", () => {
    const check = (conditions: unknown, path: string) => {
      if (typeof conditions !== "object" || conditions === null) return
      const keys = Object.keys(conditions)
      if (keys.includes("types")) expect(keys[0], path).toBe("types")
      for (const [key, value] of Object.entries(conditions)) check(value, `${path}.${key}`)
    }
    check(manifest.exports, "exports")
    expect(manifest.exports["."].node.import.types).toBe("./dist/esm/node.d.ts")
    expect(manifest.exports["."].require.types).toBe("./dist/cjs/index.d.ts")
  })
})

describe("the built files", () => {
  it("import nothing at run time but node:crypto, and only in the Node entry", () => {
    for (const format of ["esm", "cjs"]) {
      const portable = graphOf(join(root, "dist", format, "index.js"))
      const node = graphOf(join(root, "dist", format, "node.js"))
      const external = (graph: Map<string, Array<string>>) =>
        [...new Set([...graph.values()].flat().filter((s) => !s.startsWith(".")))]
      expect(external(portable), format).toEqual([])
      expect(external(node), format).toEqual(["node:crypto"])
      expect([...portable.keys()].map((f) => relative(root, f))).toContain(`dist/${format}/sha256.js`)
    }
  })

  it("resolve to the Node entry from require and import, and to the portable one elsewhere", async () => {
    const require = createRequire(import.meta.url)
    expect(require.resolve("@opsplatform/webhooks-verify")).toBe(join(root, "dist/cjs/node.js"))
    expect(fileURLToPath(import.meta.resolve("@opsplatform/webhooks-verify"))).toBe(join(root, "dist/esm/node.js"))
    const cjs = require("@opsplatform/webhooks-verify")
    const esm = await import("@opsplatform/webhooks-verify")
    const portable = await import(join(root, "dist/esm/index.js"))
    for (const api of [cjs, esm, portable, require(join(root, "dist/cjs/index.js"))]) {
      expect(api.createVerifier(secret, { now }).verify(body, signedHeaders()).id).toBe(eventId)
      expect(Object.keys(api).sort()).toEqual(
        [
          "Webhook",
          "WebhookVerificationError",
          "createVerifier",
          "defaultToleranceSeconds",
          "generateKeyPair",
          "generateSecret",
          "sign",
          "signAsync",
          "webhookErrorCodes"
        ]
      )
    }
    // The CommonJS and ESM builds are two copies of the error class; instanceof still holds across them.
    let thrown: unknown
    try {
      cjs.createVerifier(secret, { now }).verify(body, {})
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(esm.WebhookVerificationError)
    expect(thrown).not.toBeInstanceOf(esm.Webhook)
  })

  it("declare the public API without needing Node's or the DOM's types", () => {
    const declarations = ["esm", "cjs"].flatMap((format) =>
      ["index", "node"].flatMap((entry) => [...graphOf(join(root, "dist", format, `${entry}.d.ts`)).keys()])
    )
    expect(declarations.length).toBeGreaterThan(10)
    for (const file of declarations) {
      const code = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "")
      expect(code, file).not.toMatch(/\b(Buffer|NodeJS|CryptoKey|Headers|Request)\b(?!Like)/)
    }
  })
})

describe("the README", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8")

  it("lists every error code, in order, and nothing else", async () => {
    const { webhookErrorCodes } = await import("../src/node.ts")
    const table = [...readme.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1])
    expect(table).toEqual([...webhookErrorCodes])
  })

  it("imports only names the package exports", () => {
    const declarations = readFileSync(join(root, "dist/esm/common.d.ts"), "utf8") + readFileSync(join(root, "dist/esm/events.d.ts"), "utf8") +
      readFileSync(join(root, "dist/esm/node.d.ts"), "utf8")
    const imported = [...readme.matchAll(/import \{([^}]+)\} from "@opsplatform\/webhooks-verify"/g)]
      .flatMap((m) => m[1]!.split(",").map((name) => name.trim().replace(/^type /, "")))
    expect(imported.length).toBeGreaterThan(10)
    for (const name of new Set(imported)) expect(declarations, name).toMatch(new RegExp(`\\b${name}\\b`))
  })
})

describe("the published package", () => {
  it("packs only the builds, the README, the licence and the manifest", async () => {
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root })
    const [packed] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>
    const paths = packed!.files.map((f) => f.path).sort()
    const extra = paths.filter((p) => !/^(dist\/(esm|cjs)\/(runtime\/)?[a-z0-9]+\.(js|d\.ts)|dist\/cjs\/package\.json|README\.md|LICENSE|package\.json)$/.test(p))
    expect(extra).toEqual([])
    for (const required of ["LICENSE", "README.md", "package.json", "dist/esm/index.js", "dist/esm/node.js", "dist/cjs/node.js", "dist/cjs/package.json"]) {
      expect(paths).toContain(required)
    }
  })

  it("passes publint, strict", async () => {
    const { messages } = await publint({ pkgDir: root, strict: true, level: "suggestion" })
    expect(messages).toEqual([])
  })

  it("passes arethetypeswrong in every module resolution", async () => {
    const { stdout } = await run("npx", ["attw", "--pack", ".", "--format", "json"], { cwd: root }).catch((e) => e)
    const report = JSON.parse(stdout) as { analysis: { problems: Array<unknown>; entrypoints: Record<string, unknown> } }
    expect(report.analysis.problems).toEqual([])
    expect(Object.keys(report.analysis.entrypoints)).toContain(".")
  })
})
