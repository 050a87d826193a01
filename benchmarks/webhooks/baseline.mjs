// The baseline: the same signed POSTs to the same receiver from a plain
// keep-alive node:http client, with no database at all — what the machine
// and the receiver allow. Prints deliveries per second.
import { createHmac, randomBytes } from "node:crypto"
import { Agent, request } from "node:http"

const [url, countText, concurrencyText] = process.argv.slice(2)
const count = Number(countText)
const concurrency = Number(concurrencyText)
const key = randomBytes(32)
const agent = new Agent({ keepAlive: true, maxSockets: 64 })
const target = new URL(url)

const send = (i) =>
  new Promise((resolve, reject) => {
    const id = `evt_baseline_${i}`
    const body = JSON.stringify({ id, type: "fleet_vehicle.created", created: 0, environment: "sandbox", data: { id: String(i), plate: "B-1" } })
    const timestamp = Math.floor(Date.now() / 1000)
    const signature = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")
    const req = request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: "POST",
      agent,
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": `v1,${signature}`
      }
    }, (res) => {
      res.resume()
      res.on("end", resolve)
    })
    req.on("error", reject)
    req.end(body)
  })

let next = 0
const started = performance.now()
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < count) await send(next++)
}))
const seconds = (performance.now() - started) / 1000
agent.destroy()
console.log(JSON.stringify({ deliveriesPerSecond: Math.round(count / seconds) }))
