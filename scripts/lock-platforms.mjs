#!/usr/bin/env node
// Records in package-lock.json the platform-specific optional packages (e.g.
// @turbo/darwin-64) that `npm install` left out because the registry mirror
// of the machine that wrote the lock serves only Linux builds. `npm ci` refuses
// a lock that lacks a declared optional dependency, so without these entries a
// clean install fails. Each entry carries the package's os/cpu so npm skips it
// on other platforms. Run after `npm install`; idempotent.
import fs from "node:fs"

const file = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(fs.readFileSync(file, "utf8"))
const packages = lock.packages

const osOf = (name) =>
  /darwin/.test(name) ? "darwin" : /win32|windows/.test(name) ? "win32" : /linux/.test(name) ? "linux"
    : /freebsd/.test(name) ? "freebsd" : /android/.test(name) ? "android" : undefined
const cpuOf = (name) =>
  /arm64|aarch64/.test(name) ? "arm64" : /(^|[-_])(x64|64|amd64)($|[-_])/.test(name) ? "x64"
    : /ia32|[-_]32$/.test(name) ? "ia32" : /arm/.test(name) ? "arm" : undefined

let added = 0
for (const [path, meta] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const base = path === "" ? "" : `${path}/`
    if (packages[`${base}node_modules/${dep}`] || packages[`node_modules/${dep}`]) continue
    if (!/^\d+\.\d+\.\d+/.test(version)) continue
    const entry = { version, optional: true }
    if (meta.dev) entry.dev = true
    const os = osOf(dep)
    const cpu = cpuOf(dep)
    if (os) entry.os = [os]
    if (cpu) entry.cpu = [cpu]
    packages[`node_modules/${dep}`] = entry
    added++
  }
}
if (added > 0) {
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)))
  fs.writeFileSync(file, JSON.stringify(lock, null, 2) + "\n")
}
console.log(`lock-platforms: ${added} optional platform package(s) recorded`)
