/**
 * Verification throughput on a 1 KiB body with two signature entries (the
 * first from a retired secret, so both are checked): this package's sync and
 * async paths against the `standardwebhooks` and `svix` libraries and a raw
 * `node:crypto` loop doing the same work, all in one process.
 *
 * The contenders take turns (`turns.ts`): slices of about BENCH_SLICE_MS,
 * rounds of BENCH_TURNS turns; the table gives the median of BENCH_ROUNDS
 * rounds, and the range of the rounds for each ratio.
 *
 *   npm ci && npx tsx benchmarks/webhooks-verify/bench.ts   (npm ci builds the package)
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { Webhook as SvixWebhook } from "svix"
import * as Verify from "@opsplatform/webhooks-verify"
import * as Portable from "../../packages/webhooks-verify/dist/esm/index.js"
import { type Contender, printTables, refuses, runTurns } from "./turns.ts"

const rounds = Number(process.env.BENCH_ROUNDS ?? 7)
const turnsPerRound = Number(process.env.BENCH_TURNS ?? 150)
const sliceMs = Number(process.env.BENCH_SLICE_MS ?? 1)

const secret = Verify.generateSecret()
const retired = Verify.generateSecret()
const key = Buffer.from(secret.slice("whsec_".length), "base64")

const eventId = "evt_0190f5c27a1b7c3d8e4f0123456789ab"
const envelope = {
  id: eventId,
  type: "email.received",
  created: Math.floor(Date.now() / 1000),
  environment: "live",
  data: {
    object: "email_message",
    id: "0190f5c2-7a1b-7c3d-8e4f-0123456789ab",
    message_id: "<CAF=abc123@mail.example.com>",
    mailbox: "invoices",
    recipient: "invoices@acme.example",
    from: "billing@supplier.example",
    subject: "",
    received_at: new Date().toISOString(),
    size_bytes: 48213,
    has_attachments: true,
    organizationId: "0190f5c2-7a1b-7c3d-8e4f-000000000003"
  }
}
const unpadded = JSON.stringify(envelope).length
envelope.data.subject = "Invoice ".padEnd(1024 - unpadded, "x")
const body = Buffer.from(JSON.stringify(envelope))
if (body.length !== 1024) throw new Error(`body is ${body.length} bytes, not 1024`)

/** Fresh headers each round: the reference libraries read the real clock. */
const headersNow = (): Record<string, string> => {
  const timestamp = Math.floor(Date.now() / 1000)
  const current = Verify.sign(secret, { id: eventId, payload: body, timestamp })
  const old = Verify.sign(retired, { id: eventId, payload: body, timestamp })
  return { ...current, "webhook-signature": `${old["webhook-signature"]} ${current["webhook-signature"]}` }
}

/** The baseline: what a careful hand-written check does with node:crypto and nothing else. */
const rawLoop = (payload: Buffer, headers: Record<string, string>): boolean => {
  const expected = createHmac("sha256", key)
    .update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.`)
    .update(payload)
    .digest()
  for (const entry of headers["webhook-signature"]!.split(" ")) {
    const [version, signature] = entry.split(",")
    if (version !== "v1" || signature === undefined) continue
    const candidate = Buffer.from(signature, "base64")
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) return true
  }
  return false
}

const verifier = Verify.createVerifier(secret)
const portable = Portable.createVerifier(secret)
const webhook = new Verify.Webhook(secret)
const standard = new StandardWebhook(secret)
const svix = new SvixWebhook(secret)

const contenders: ReadonlyArray<Contender<Record<string, string>>> = [
  ["raw node:crypto loop", (h) => rawLoop(body, h)],
  ["raw node:crypto loop + JSON.parse", (h) => rawLoop(body, h) && JSON.parse(body.toString())],
  ["verifySignature (sync)", (h) => verifier.verifySignature(body, h)],
  ["verify (sync, parses)", (h) => verifier.verify(body, h)],
  ["Webhook.verify (drop-in, parses)", (h) => webhook.verify(body, h)],
  ["verifyAsync (Node entry)", (h) => verifier.verifyAsync(body, h)],
  ["verifyAsync (Web Crypto entry)", (h) => portable.verifyAsync(body, h)],
  ["verify (plain-JS HMAC entry)", (h) => portable.verify(body, h)],
  ["standardwebhooks Webhook.verify (parses)", (h) => standard.verify(body, h)],
  ["standardwebhooks Webhook.verify (jsonParse: false)", (h) => standard.verify(body, h, { jsonParse: false }) ?? true],
  ["svix Webhook.verify", (h) => svix.verify(body, h)]
]

// Every contender must accept the delivery and refuse one signed with another secret, or its timing means nothing.
{
  const h = headersNow()
  const stranger = { ...h, "webhook-signature": h["webhook-signature"]!.split(" ")[0]! }
  for (const [name, run] of contenders) {
    const result = await run(h)
    if (result === false || (!name.startsWith("svix") && (result === undefined || result === null))) {
      throw new Error(`${name} refused a valid delivery`)
    }
    if (!(await refuses(() => run(stranger)))) throw new Error(`${name} accepts a signature made with another secret`)
  }
}

const names = contenders.map(([name]) => name)
const results = await runTurns(contenders, { rounds, turns: turnsPerRound, sliceMs, headers: headersNow, warmSlices: 30, warmCalls: 100, minCalls: 10 })
console.log(`Node ${process.version}, ${rounds} rounds × ${turnsPerRound} turns × ${sliceMs} ms slices, ${body.length}-byte body, two v1 entries\n`)
printTables(results, names, [
  ["verify (sync, parses) / standardwebhooks (parses)", "verify (sync, parses)", "standardwebhooks Webhook.verify (parses)", "≥ 3.5"],
  ["verifySignature (sync) / standardwebhooks (jsonParse: false)", "verifySignature (sync)", "standardwebhooks Webhook.verify (jsonParse: false)", "≥ 3.5"],
  ["Webhook.verify (drop-in) / standardwebhooks (parses)", "Webhook.verify (drop-in, parses)", "standardwebhooks Webhook.verify (parses)", ""],
  ["verifySignature (sync) / raw node:crypto loop", "verifySignature (sync)", "raw node:crypto loop", "≥ 0.9"],
  ["verify (sync, parses) / raw loop + JSON.parse", "verify (sync, parses)", "raw node:crypto loop + JSON.parse", ""],
  ["verifySignature (sync) / svix", "verifySignature (sync)", "svix Webhook.verify", ""],
  ["verifyAsync (Node entry) / standardwebhooks (parses)", "verifyAsync (Node entry)", "standardwebhooks Webhook.verify (parses)", ""],
  ["verifyAsync (Web Crypto entry) / standardwebhooks (parses)", "verifyAsync (Web Crypto entry)", "standardwebhooks Webhook.verify (parses)", ""]
])
