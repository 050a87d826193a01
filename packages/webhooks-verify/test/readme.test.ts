import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * The README's TypeScript snippets are the examples' code: each one is a
 * `// #region` of a file under examples/, which those examples' tests run
 * against real deliveries. Edit the example, then paste its region here.
 */
const root = fileURLToPath(new URL("..", import.meta.url))
const examples = fileURLToPath(new URL("../../../examples", import.meta.url))
const readme = readFileSync(join(root, "README.md"), "utf8")

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === "node_modules" || e.name === "test" ? [] : e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )

const regions = new Map<string, string>()
for (const file of sources(examples)) {
  for (const m of readFileSync(file, "utf8").matchAll(/\/\/ #region (\S+)\n([\s\S]*?)\/\/ #endregion \1\n/g)) {
    regions.set(m[2]!.trimEnd(), `${relative(examples, file)}#${m[1]}`)
  }
}

describe("the README's snippets", () => {
  const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!.trimEnd())

  it("are there, for each framework section", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(9)
    expect(regions.size).toBeGreaterThanOrEqual(snippets.length)
  })

  it.each(snippets.map((s) => [s.split("\n").find((l) => !l.startsWith("import") && l.trim() !== "")!.slice(0, 60), s] as const))(
    "%s… is an example's code",
    (_first, snippet) => {
      expect(regions.has(snippet), `no region of examples/ reads:\n${snippet}`).toBe(true)
    }
  )
})
