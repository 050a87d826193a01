import * as http from "node:http"

export interface SeenRequest {
  readonly method: string
  readonly path: string
  readonly idempotencyKey: string | undefined
  /** Whether the proxy dropped the connection instead of answering. */
  readonly lost: boolean
}

export interface LossyProxy {
  /** Base URL of the proxy, e.g. http://127.0.0.1:41234. */
  readonly url: string
  /** Every request that passed through, in order. */
  readonly seen: ReadonlyArray<SeenRequest>
  /**
   * The next `count` requests matching `method` are forwarded and handled by
   * the server, but their responses never reach the client: the proxy closes
   * the connection instead, as a network failure after the server committed.
   */
  readonly loseResponses: (method: string, count?: number) => void
  readonly close: () => Promise<void>
}

/**
 * A loopback HTTP proxy in front of a real server that can lose responses on
 * purpose: what a client's retries and `Idempotency-Key` are for.
 */
export const startLossyProxy = async (upstream: string): Promise<LossyProxy> => {
  const seen: Array<SeenRequest> = []
  const toLose = new Map<string, number>()
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const method = req.method ?? "GET"
      const lose = (toLose.get(method) ?? 0) > 0
      if (lose) toLose.set(method, toLose.get(method)! - 1)
      const key = req.headers["idempotency-key"]
      seen.push({ method, path: req.url ?? "/", idempotencyKey: Array.isArray(key) ? key[0] : key, lost: lose })
      const headers = { ...req.headers }
      delete headers.host
      const forward = http.request(new URL(req.url ?? "/", upstream), { method, headers }, (answer) => {
        if (lose) {
          answer.resume()
          answer.on("end", () => req.socket.destroy())
          return
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      forward.on("error", () => req.socket.destroy())
      forward.end(Buffer.concat(chunks))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    loseResponses: (method, count = 1) => toLose.set(method, (toLose.get(method) ?? 0) + count),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
