import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

export interface PackagingReport {
  /** publint's messages in strict mode (empty: nothing to fix). */
  readonly publint: ReadonlyArray<unknown>
  /** arethetypeswrong's problems for the packed tarball, minus the kinds ignored. */
  readonly attw: ReadonlyArray<{ readonly kind: string; readonly entrypoint?: string; readonly resolutionKind?: string }>
  /** The entry points arethetypeswrong resolved. */
  readonly entrypoints: ReadonlyArray<string>
  /** The names the package's main entry exports, loaded by name in plain Node. */
  readonly exports: ReadonlyArray<string>
}

/**
 * What publishing a package would give its users: `publint --strict`,
 * `attw --pack` (ESM-only packages ignore `CJSResolvesToESM`, the one
 * problem an ESM-only package cannot avoid), and its main entry loaded by name.
 * Needs `publint` and `@arethetypeswrong/cli` installed, and the package built.
 */
export const checkPackaging = async (pkgDir: string, options: { readonly ignoreKinds?: ReadonlyArray<string> } = {}): Promise<PackagingReport> => {
  const { publint } = await import("publint")
  const { messages } = await publint({ pkgDir, strict: true, level: "suggestion" })
  const { stdout } = await run("npx", ["attw", "--pack", ".", "--format", "json"], { cwd: pkgDir, maxBuffer: 64 * 1024 * 1024 })
    .catch((e: { stdout: string }) => ({ stdout: e.stdout }))
  const report = JSON.parse(stdout) as { analysis: { problems: PackagingReport["attw"]; entrypoints: Record<string, unknown> } }
  const name = (JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { name: string }).name
  const loaded = await run(process.execPath, [
    "--input-type=module",
    "-e",
    `const entry = await import(${JSON.stringify(name)}); console.log(JSON.stringify(Object.keys(entry)))`
  ], { cwd: pkgDir })
  return {
    publint: messages,
    attw: report.analysis.problems.filter((p) => !(options.ignoreKinds ?? []).includes(p.kind)),
    entrypoints: Object.keys(report.analysis.entrypoints),
    exports: JSON.parse(loaded.stdout) as Array<string>
  }
}
