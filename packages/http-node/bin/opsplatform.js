#!/usr/bin/env node
// An older Node.js fails deep inside a dependency; say what is wrong before loading anything.
const [major, minor] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(JSON.stringify({
    error: { code: "unsupported_node", message: `opsplatform needs Node.js 22.19 or later; this is ${process.versions.node}` }
  }))
  process.exit(1)
}
await import("../dist/cli/main.js")
