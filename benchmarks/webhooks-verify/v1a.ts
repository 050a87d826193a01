/**
 * `v1a` (Ed25519) verification throughput on a 1 KiB body: this package's
 * paths with a `whpk_` public key against a raw `node:crypto` loop doing the
 * same work (split the header, base64-decode the `v1a` entry, verify the
 * Ed25519 signature of `{id}.{timestamp}.{body}` with a `KeyObject` made
 * once), and, for scale, the same package verifying `v1` (HMAC) on the same
 * body.
 *
 * The contenders take turns (`turns.ts`): slices of about BENCH_SLICE_MS,
 * rounds of BENCH_TURNS turns; the table gives the median of BENCH_ROUNDS
 * rounds, and the range of the rounds for each ratio.
 *
 *   npm ci && npx tsx benchmarks/webhooks-verify/v1a.ts   (npm ci builds the package)
 */
import { createPublicKey, verify } from "node:crypto"
import * as Verify from "@opsplatform/webhooks-verify"
import * as Portable from "../../packages/webhooks-verify/dist/esm/index.js"
import { printTables, refuses, runTurns } from "./turns.ts"

const rounds = Number(process.env.BENCH_ROUNDS ?? 7)
const turnsPerRound = Number(process.env.BENCH_TURNS ?? 60)
const sliceMs = Number(process.env.BENCH_SLICE_MS ?? 2)

const pair = await Verify.generateKeyPair()
const other = await Verify.generateKeyPair()
const secret = Verify.generateSecret()

const eventId = "evt_0190f5c27a1b7c3d8e4f0123456789ab"
const envelope = {
  id: eventId,
  type: "email.received",
  created: Math.floor(Date.now() / 1000),
  environment: "live",
  data: { object: "email_message", id: "0190f5c2-7a1b-7c3d-8e4f-0123456789ab", subject: "", organizationId: "0190f5c2-7a1b-7c3d-8e4f-000000000003" }
}
envelope.data.subject = "Invoice ".padEnd(1024 - JSON.stringify(envelope).length, "x")
const body = Buffer.from(JSON.stringify(envelope))
if (body.length !== 1024) throw new Error(`body is ${body.length} bytes, not 1024`)

type Headers = { readonly v1a: Record<string, string>; readonly v1: Record<string, string> }

/** Fresh headers each round (the tolerance reads the real clock): one v1a entry, and one v1 entry for the HMAC contender. */
const headersNow = (): Headers => {
  const timestamp = Math.floor(Date.now() / 1000)
  return {
    v1a: Verify.sign(pair.privateKey, { id: eventId, payload: body, timestamp }) as Record<string, string>,
    v1: Verify.sign(secret, { id: eventId, payload: body, timestamp }) as Record<string, string>
  }
}

/** The baseline: a careful hand-written check with node:crypto and nothing else, its key made once. */
const rawKey = createPublicKey({
  key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(pair.publicKey.slice("whpk_".length), "base64")]),
  format: "der",
  type: "spki"
})
const rawLoop = (payload: Buffer, headers: Record<string, string>): boolean => {
  const content = Buffer.concat([Buffer.from(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.`), payload])
  for (const entry of headers["webhook-signature"]!.split(" ")) {
    const [version, signature] = entry.split(",")
    if (version !== "v1a" || signature === undefined) continue
    if (verify(null, content, rawKey, Buffer.from(signature, "base64"))) return true
  }
  return false
}

const verifier = Verify.createVerifier(pair.publicKey)
const portable = Portable.createVerifier(pair.publicKey)
const hmacVerifier = Verify.createVerifier(secret)

type Contender = readonly [name: string, scheme: "v1" | "v1a", run: (headers: Record<string, string>) => unknown]

const contenders: ReadonlyArray<Contender> = [
  ["raw node:crypto Ed25519 loop", "v1a", (h) => rawLoop(body, h)],
  ["verifySignature (sync, v1a)", "v1a", (h) => verifier.verifySignature(body, h)],
  ["verify (sync, v1a, parses)", "v1a", (h) => verifier.verify(body, h)],
  ["verifyAsync (Node entry, v1a)", "v1a", (h) => verifier.verifyAsync(body, h)],
  ["verifyAsync (Web Crypto entry, v1a)", "v1a", (h) => portable.verifyAsync(body, h)],
  ["verifySignature (sync, v1)", "v1", (h) => hmacVerifier.verifySignature(body, h)]
]

// Every contender must accept the delivery and refuse one signed with another key, or its timing means nothing.
{
  const h = headersNow()
  const stranger = Verify.sign(other.privateKey, { id: eventId, payload: body, timestamp: Number(h.v1a["webhook-timestamp"]) })
  for (const [name, scheme, run] of contenders) {
    if ((await run(h[scheme])) === false) throw new Error(`${name} refused a valid delivery`)
    if (scheme === "v1") continue
    if (!(await refuses(() => run(stranger)))) throw new Error(`${name} accepts a signature made with another key`)
  }
}

const names = contenders.map(([name]) => name)
const results = await runTurns(
  contenders.map(([name, scheme, run]) => [name, (h: Headers) => run(h[scheme])] as const),
  { rounds, turns: turnsPerRound, sliceMs, headers: headersNow, warmSlices: 21, minCalls: 5 }
)
console.log(`Node ${process.version}, ${rounds} rounds × ${turnsPerRound} turns × ${sliceMs} ms slices, ${body.length}-byte body, one v1a entry\n`)
printTables(results, names, [
  ["verifySignature (sync, v1a) / raw node:crypto Ed25519 loop", "verifySignature (sync, v1a)", "raw node:crypto Ed25519 loop", "≥ 0.9"],
  ["verifyAsync (Node entry, v1a) / raw loop", "verifyAsync (Node entry, v1a)", "raw node:crypto Ed25519 loop", ""],
  ["verifyAsync (Web Crypto entry, v1a) / raw loop", "verifyAsync (Web Crypto entry, v1a)", "raw node:crypto Ed25519 loop", ""],
  ["verifySignature v1a / verifySignature v1", "verifySignature (sync, v1a)", "verifySignature (sync, v1)", ""]
])
