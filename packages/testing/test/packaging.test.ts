import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { checkPackaging } from "../src/packaging.ts"

/** The two packages every storage implementation works with, as their users install them (from the build). */
describe.each([
  ["@opsplatform/core", "../../core", ["CoreLayers", "Locations", "Migrations", "Tenancy"]],
  ["@opsplatform/testing", "..", ["MemoryCore", "makeFixture"]]
] as const)("%s", (_name, dir, names) => {
  it("passes publint --strict and attw --pack, and its entry loads by name in plain Node", async () => {
    const report = await checkPackaging(fileURLToPath(new URL(dir, import.meta.url)), { ignoreKinds: ["CJSResolvesToESM"] })
    expect(report.publint).toEqual([])
    expect(report.attw).toEqual([])
    expect(report.entrypoints).toContain(".")
    for (const name of names) expect(report.exports).toContain(name)
  }, 120_000)
})

describe("every published package's README", () => {
  const packagesDir = fileURLToPath(new URL("../..", import.meta.url))
  const published = readdirSync(packagesDir).filter((dir) => {
    const file = join(packagesDir, dir, "package.json")
    return existsSync(file) && JSON.parse(readFileSync(file, "utf8")).private !== true
  })

  it("covers the five packages", () => {
    expect(published.sort()).toEqual(["client", "core", "http-node", "testing", "webhooks-verify"])
  })

  it.each(published)("%s starts with what the package is for, then a short example", (dir) => {
    const readme = readFileSync(join(packagesDir, dir, "README.md"), "utf8")
    const name = JSON.parse(readFileSync(join(packagesDir, dir, "package.json"), "utf8")).name
    const [title, purpose, example] = readme.split(/\n\n+/)
    expect(title).toBe(`# ${name}`)
    expect(purpose!.length).toBeGreaterThan(60)
    expect(purpose).not.toMatch(/^[#`|]/)
    const lines = example!.split("\n")
    expect(lines[0]).toMatch(/^```(ts|sh)$/)
    const code = readme.slice(readme.indexOf(example!)).split("```")[1]!.split("\n").slice(1).filter((l) => l.trim() !== "")
    expect(code.length).toBeGreaterThanOrEqual(3)
    expect(code.length).toBeLessThanOrEqual(7)
  })
})
