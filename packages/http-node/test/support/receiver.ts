import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { createVerifier } from "@opsplatform/webhooks-verify"
import { Webhook } from "standardwebhooks"
import nacl from "tweetnacl"
// The package's Web Crypto entry (browsers, Workers), as those runtimes load it: Ed25519 through crypto.subtle.
import * as WebCryptoVerify from "../../../webhooks-verify/dist/esm/index.js"

export interface Received {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly at: number
  /** The answer the receiver gave. */
  readonly status: number
  /** The sender's port: the same for requests on one kept-alive connection. */
  readonly remotePort: number
}

export interface Answer {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: string
  /** Wait this long before answering. */
  readonly delayMs?: number
}

/**
 * A webhook receiver on loopback, as a subscriber would run it: every
 * request is verified against the keys it knows (a delivery refused is a
 * test failure, kept in `rejected`), then answered as `answer` says. A
 * `whsec_` secret is checked by the `standardwebhooks` library and by
 * `@opsplatform/webhooks-verify`; a `whpk_` public key (v1a) by the
 * package's Node entry, its Web Crypto entry and TweetNaCl.
 */
export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  readonly rejected: Array<{ readonly headers: http.IncomingHttpHeaders; readonly reason: string }>
  /** Secrets or public keys deliveries must verify with; set after the subscription is created. */
  secrets: Array<string>
  answer: (request: { readonly n: number; readonly headers: http.IncomingHttpHeaders; readonly body: string }) => Answer
  /** Resolves once `predicate` holds over what was received (checked on every delivery). */
  readonly until: (predicate: (received: ReadonlyArray<Received>) => boolean, timeoutMs?: number) => Promise<void>
  readonly close: () => Promise<void>
}

const withStandardWebhooks = (secret: string, headers: http.IncomingHttpHeaders, body: string): boolean => {
  try {
    new Webhook(secret).verify(body, {
      "webhook-id": String(headers["webhook-id"]),
      "webhook-timestamp": String(headers["webhook-timestamp"]),
      "webhook-signature": String(headers["webhook-signature"])
    })
    return true
  } catch {
    return false
  }
}

const withOurVerifier = (secret: string, headers: http.IncomingHttpHeaders, body: string): boolean => {
  try {
    createVerifier(secret).verify(body, headers)
    return true
  } catch {
    return false
  }
}

/**
 * Whether `secret` verifies a delivery, by the `standardwebhooks` library and
 * by `@opsplatform/webhooks-verify` alike; the two disagreeing is a failure.
 */
export const verifyWith = (secret: string, headers: http.IncomingHttpHeaders, body: string): boolean => {
  const standard = withStandardWebhooks(secret, headers, body)
  const ours = withOurVerifier(secret, headers, body)
  if (standard !== ours) {
    throw new Error(`standardwebhooks says ${standard} but @opsplatform/webhooks-verify says ${ours}`)
  }
  return standard
}

/** TweetNaCl, an Ed25519 implementation independent of node:crypto and Web Crypto: does any v1a entry verify? */
const withTweetNacl = (publicKey: string, headers: http.IncomingHttpHeaders, body: string): boolean => {
  const key = Buffer.from(publicKey.slice("whpk_".length), "base64")
  const content = Buffer.from(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`)
  return String(headers["webhook-signature"]).split(" ").some((entry) =>
    entry.startsWith("v1a,") && nacl.sign.detached.verify(content, Buffer.from(entry.slice(4), "base64"), key)
  )
}

const succeeds = async (run: () => unknown): Promise<boolean> => {
  try {
    await run()
    return true
  } catch {
    return false
  }
}

/**
 * Whether a `whpk_` public key verifies a delivery, by `@opsplatform/webhooks-verify`
 * on node:crypto (sync) and on Web Crypto (async), and by TweetNaCl; any of the
 * three disagreeing is a failure.
 */
export const verifyWithPublicKey = async (publicKey: string, headers: http.IncomingHttpHeaders, body: string): Promise<boolean> => {
  const node = await succeeds(() => createVerifier(publicKey).verify(body, headers))
  const webCrypto = await succeeds(() => WebCryptoVerify.createVerifier(publicKey).verifyAsync(body, headers))
  const tweetnacl = withTweetNacl(publicKey, headers, body)
  if (node !== webCrypto || node !== tweetnacl) {
    throw new Error(`node:crypto says ${node}, Web Crypto says ${webCrypto}, TweetNaCl says ${tweetnacl}`)
  }
  return node
}

/** Whether a secret or public key verifies a delivery, by every verifier that can check its kind. */
const verifiedBy = (key: string, headers: http.IncomingHttpHeaders, body: string): Promise<boolean> =>
  key.startsWith("whpk_") ? verifyWithPublicKey(key, headers, body) : Promise.resolve(verifyWith(key, headers, body))

const tlsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "tls")

/** The receiver's self-signed certificate (127.0.0.1 and localhost), to trust as `OPSPLATFORM_WEBHOOKS_CA_FILE`. */
export const receiverCertificateFile = path.join(tlsDir, "receiver-cert.pem")

export const startReceiver = async (options: { readonly tls?: boolean } = {}): Promise<Receiver> => {
  const waiters: Array<() => void> = []
  const state = {
    received: [] as Array<Received>,
    rejected: [] as Array<{ headers: http.IncomingHttpHeaders; reason: string }>,
    secrets: [] as Array<string>,
    answer: ((_: unknown) => ({ status: 204 })) as Receiver["answer"]
  }
  let n = 0
  const handler: http.RequestListener = (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8")
      try {
        const verified = await Promise.all(state.secrets.map((key) => verifiedBy(key, req.headers, body)))
        if (!verified.includes(true)) state.rejected.push({ headers: req.headers, reason: "no known secret or public key verifies the delivery" })
      } catch (error) {
        state.rejected.push({ headers: req.headers, reason: String(error) })
      }
      const answer = state.answer({ n: ++n, headers: req.headers, body })
      const send = () => {
        res.writeHead(answer.status, answer.headers ?? {})
        res.end(answer.body ?? "")
        state.received.push({ headers: req.headers, body, at: Date.now(), status: answer.status, remotePort: req.socket.remotePort ?? 0 })
        for (const w of waiters.splice(0)) w()
      }
      if (answer.delayMs !== undefined) setTimeout(send, answer.delayMs)
      else send()
    })
  }
  const server = options.tls
    ? https.createServer({
      cert: fs.readFileSync(receiverCertificateFile),
      key: fs.readFileSync(path.join(tlsDir, "receiver-key.pem"))
    }, handler)
    : http.createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const receiver: Receiver = {
    url: `${options.tls ? "https" : "http"}://127.0.0.1:${port}/hooks`,
    get received() {
      return state.received
    },
    get rejected() {
      return state.rejected
    },
    get secrets() {
      return state.secrets
    },
    set secrets(value) {
      state.secrets = value
    },
    get answer() {
      return state.answer
    },
    set answer(value) {
      state.answer = value
    },
    until: (predicate, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${state.received.length} received)`)),
          timeoutMs
        )
        const check = () => {
          if (predicate(state.received)) {
            clearTimeout(timer)
            resolve()
          } else waiters.push(check)
        }
        check()
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  return receiver
}
