import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

/**
 * The shape of core, read from its imports against the layer table of
 * docs/architecture.md ("Layers of core"): `shared` at the bottom, the event
 * outbox above it, then the areas, each layer using only the layers below it.
 * The page is the table: a new area folder must be placed there before
 * anything else passes, so its place is decided once, on purpose, and said.
 */
const page = fs.readFileSync(path.resolve(import.meta.dirname, "../../../docs/architecture.md"), "utf8")
const layerTable = page.slice(page.indexOf("## Layers of core"), page.indexOf("\n## ", page.indexOf("## Layers of core") + 1))
const layers: ReadonlyArray<ReadonlyArray<string>> = [...layerTable.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)]
  .map((row) => ({ layer: Number(row[1]), folders: [...row[2]!.matchAll(/`([a-z]+)`/g)].map((m) => m[1]!) }))
  .sort((a, b) => a.layer - b.layer)
  .map((row) => row.folders)

/** Files at the root of src compose everything: they may import any area. */
const compositionRoots = new Set(["index.ts", "layers.ts"])

const src = path.resolve(import.meta.dirname, "../src")

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

const importPattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/g

/** Relative imports of a file, resolved to files of src. */
const importsOf = (file: string): Array<string> =>
  [...fs.readFileSync(file, "utf8").matchAll(importPattern)].map((m) => path.resolve(path.dirname(file), m[1]!))

const areaOf = (file: string): string => {
  const relative = path.relative(src, file)
  return relative.includes(path.sep) ? relative.split(path.sep)[0]! : relative
}

const rank = new Map(layers.flatMap((areas, i) => areas.map((area) => [area, i] as const)))

const files = sourceFiles(src)
const graph = new Map(files.map((file) => [file, importsOf(file)]))

describe("core's imports run one way", () => {
  it("reads its layers from docs/architecture.md, layer 0 to the top, each folder once", () => {
    expect(layers[0]).toEqual(["shared"])
    expect(layers.length).toBeGreaterThanOrEqual(5)
    const folders = layers.flat()
    expect(new Set(folders).size).toBe(folders.length)
  })

  it("every area folder has a place in the layers", () => {
    const areas = new Set(files.map(areaOf).filter((a) => !compositionRoots.has(a)))
    expect([...areas].filter((a) => !rank.has(a)).sort()).toEqual([])
  })

  it("no area imports an area of its own layer or above it", () => {
    const backwards: Array<string> = []
    for (const [file, imports] of graph) {
      const from = areaOf(file)
      if (compositionRoots.has(from)) continue
      for (const target of imports) {
        const to = areaOf(target)
        if (to === from) continue
        if (compositionRoots.has(to) || (rank.get(to) ?? Infinity) >= (rank.get(from) ?? -1)) {
          backwards.push(`${path.relative(src, file)} -> ${path.relative(src, target)}`)
        }
      }
    }
    expect(backwards).toEqual([])
  })

  it("no file takes part in an import circle", () => {
    const circles: Array<string> = []
    const state = new Map<string, "open" | "done">()
    const visit = (file: string, trail: Array<string>) => {
      if (state.get(file) === "done") return
      if (state.get(file) === "open") {
        circles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(src, f)).join(" -> "))
        return
      }
      state.set(file, "open")
      for (const target of graph.get(file) ?? []) visit(target, [...trail, file])
      state.set(file, "done")
    }
    for (const file of files) visit(file, [])
    expect(circles).toEqual([])
  })

  it("the check sees a backwards import when there is one", () => {
    // The rules above are only as good as the import reading: it must find what this file says.
    const sample = `import { Outbox } from "../events/Outbox.ts"\nexport { x } from "./y.ts"\nimport type { T } from "../shared/t.ts"`
    expect([...sample.matchAll(importPattern)].map((m) => m[1])).toEqual(["../events/Outbox.ts", "./y.ts", "../shared/t.ts"])
  })
})

/**
 * Every repository of tenant-owned rows declares its port with `TenantScoped`,
 * so a method that forgets the tenant does not compile. The stores listed here
 * hold no tenant's rows, or serve every tenant by nature; each says why.
 */
const crossTenantStores: Record<string, string> = {
  "tenancy/TenancyRepo.ts": "organizations, users and memberships are the tenants themselves",
  "idempotency/IdempotencyRepo.ts": "keyed by credential, whose tenant is part of the key",
  "ratelimit/RateLimiter.ts": "counters keyed by policy, shared by every process"
}

describe("repositories take the tenant", () => {
  const repos = files.filter((f) => /Repo\.ts$/.test(f) || path.basename(f) === "RateLimiter.ts")

  it("every repository port is TenantScoped or a listed cross-tenant store", () => {
    const unscoped = repos
      .map((f) => path.relative(src, f))
      .filter((f) => crossTenantStores[f] === undefined)
      .filter((f) => !/Context\.Service<\w+,\s*TenantScoped</.test(fs.readFileSync(path.join(src, f), "utf8")))
    expect(unscoped).toEqual([])
  })

  it("every listed cross-tenant store still exists", () => {
    expect(Object.keys(crossTenantStores).filter((f) => !fs.existsSync(path.join(src, f)))).toEqual([])
  })
})

describe("string limits count characters", () => {
  it("no string schema in any package's src limits its length in UTF-16 units (isMaxLength is for arrays)", () => {
    const packages = path.resolve(src, "../..")
    const offenders: Array<string> = []
    for (const pkg of fs.readdirSync(packages)) {
      const dir = path.join(packages, pkg, "src")
      if (!fs.existsSync(dir)) continue
      for (const file of sourceFiles(dir)) {
        fs.readFileSync(file, "utf8").split("\n").forEach((line, i) => {
          if (/Schema\.String\.check\([^)]*isMaxLength\(/.test(line)) offenders.push(`${path.relative(packages, file)}:${i + 1}`)
        })
      }
    }
    expect(offenders).toEqual([])
  })
})
