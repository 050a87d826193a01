// The benchmark's receiver, in its own process: answers 204 at once and notes
// when each event id first arrived, and which signature schemes each delivery
// carried; once the number the parent expects have arrived, it sends the
// arrival times and the scheme counts over IPC.
import { createServer } from "node:http"

const first = new Map()
let total = 0
let schemes = {}
let expected = Infinity
const server = createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    total++
    const scheme = String(req.headers["webhook-signature"]).split(" ").map((entry) => entry.split(",")[0]).join(" ")
    schemes[scheme] = (schemes[scheme] ?? 0) + 1
    const id = req.headers["webhook-id"]
    if (!first.has(id)) {
      first.set(id, Date.now())
      // Every expected event has arrived once: hand the arrival times to the parent.
      if (first.size === expected) {
        process.send({ total, first: Object.fromEntries(first), schemes })
        first.clear()
        total = 0
        schemes = {}
        expected = Infinity
      }
    }
    res.writeHead(204).end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }))
process.on("message", (message) => {
  if (typeof message === "object" && message.expect !== undefined) {
    expected = message.expect
  } else if (message === "stop") {
    server.closeAllConnections()
    server.close(() => process.exit(0))
  }
})
