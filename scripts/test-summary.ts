import type { Reporter, TestModule } from "vitest/node"

/**
 * A vitest reporter for the end of `npm test`: the ten slowest test files and
 * each package's time (the sum of its files' times: files run in parallel, so
 * the sum is the work a package adds to a run, not a stretch of wall clock),
 * so that a slower suite is seen the day it lands.
 */
export default class TestSummary implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    if (modules.length === 0) return
    const files = modules.map((module) => {
      const d = module.diagnostic()
      const ms = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration
      return { project: module.project.name, file: module.relativeModuleId, ms, tests: [...module.children.allTests()].length }
    })
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1).padStart(6)} s`
    const lines = ["", "Slowest test files:"]
    for (const f of [...files].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
      lines.push(`  ${seconds(f.ms)}  ${f.project} ${f.file} (${f.tests} tests)`)
    }
    lines.push("", "Time by package (sum of its files):")
    const byProject = new Map<string, { ms: number; files: number; tests: number }>()
    for (const f of files) {
      const p = byProject.get(f.project) ?? { ms: 0, files: 0, tests: 0 }
      byProject.set(f.project, { ms: p.ms + f.ms, files: p.files + 1, tests: p.tests + f.tests })
    }
    for (const [project, p] of [...byProject].sort((a, b) => b[1].ms - a[1].ms)) {
      lines.push(`  ${seconds(p.ms)}  ${project} (${p.files} files, ${p.tests} tests)`)
    }
    console.log(lines.join("\n"))
  }
}
