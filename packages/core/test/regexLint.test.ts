import { ESLint } from "eslint"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * Every regular expression in `packages/*\/src` matches in linear time:
 * eslint-plugin-regexp's `no-super-linear-backtracking` and
 * `no-super-linear-move` (the root `eslint.config.js`) run over the sources
 * here, in `npm test`, and a new pattern they flag fails this test
 * (decided: docs/decisions.md, "Limits and ranges").
 */
const root = fileURLToPath(new URL("../../..", import.meta.url))
const eslint = new ESLint({ cwd: root })

const findings = (results: ReadonlyArray<ESLint.LintResult>) =>
  results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(root.length)}:${m.line}:${m.column} ${m.ruleId ?? "parse"}: ${m.message}`))

describe("regular expressions in the sources", () => {
  it("are all linear: the regex linter flags none", async () => {
    const results = await eslint.lintFiles(["packages/*/src/**/*.ts"])
    expect(results.length).toBeGreaterThan(200)
    expect(findings(results)).toEqual([])
  }, 120_000)

  it("the linter does flag the super-linear patterns the sources once had", async () => {
    const source = [
      `export const email = /^[^\\s@<>",;]+@[^\\s@<>",;]+\\.[^\\s@<>",;]+$/`,
      `export const host = /^([0-9A-Fa-f:]*:[0-9A-Fa-f:.]+)$/`,
      `export const delivered = (s: string) => /[^\\s<>",;:]+@[^\\s<>",;]+/.exec(s)`,
      `export const trimmed = (s: string) => s.replace(/\\/+$/, "")`
    ].join("\n")
    const results = await eslint.lintText(source, { filePath: `${root}packages/core/src/regexLintProbe.ts` })
    const rules = results[0]!.messages.map((m) => `${m.line} ${m.ruleId}`)
    expect(rules).toEqual([
      "1 regexp/no-super-linear-backtracking",
      "2 regexp/no-super-linear-backtracking",
      "3 regexp/no-super-linear-move",
      "4 regexp/no-super-linear-move"
    ])
  })
})
