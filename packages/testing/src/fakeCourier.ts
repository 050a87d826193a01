import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A courier quote API on loopback speaking the platform's courier contract
 * (docs/decisions.md, "Courier quote API"), for tests and demos. It can be
 * slow, fail, leave stops out or answer in another currency. Node only.
 */
export interface FakeCourierOptions {
  /** Price per parcel, minor units (default 500). */
  readonly perParcelMinor?: number | undefined
  /** Price per kg, minor units (default 100); the quote is rounded to a whole minor unit. */
  readonly perKgMinor?: number | undefined
  /** Currency of the answer (default: the one asked for). */
  readonly currency?: string | undefined
  /** Wait this long before answering. */
  readonly delayMs?: number | undefined
  /** Answer with this status and no quotes (e.g. 503). */
  readonly failWith?: number | undefined
  /** Stops (by reference) the courier does not serve. */
  readonly skip?: ((reference: string) => boolean) | undefined
  /** When set, a request without `Authorization: Bearer <token>` gets 401. */
  readonly token?: string | undefined
}

/** What the courier quote contract sends (docs/decisions.md: the courier quote contract). */
export interface FakeCourierQuoteRequest {
  readonly currency?: string
  readonly parcels: ReadonlyArray<{ readonly reference: string; readonly count: number; readonly weight_kg: number }>
  readonly [field: string]: unknown
}

export interface FakeCourierRequest {
  readonly headers: IncomingHttpHeaders
  readonly body: FakeCourierQuoteRequest
}

export interface FakeCourier {
  readonly url: string
  /** Every request received, in order. */
  readonly requests: ReadonlyArray<FakeCourierRequest>
  readonly close: () => Promise<void>
}

export const startFakeCourier = async (options: FakeCourierOptions = {}): Promise<FakeCourier> => {
  const requests: Array<FakeCourierRequest> = []
  const timers = new Set<NodeJS.Timeout>()
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      let body: FakeCourierQuoteRequest
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as FakeCourierQuoteRequest
      } catch {
        res.writeHead(400).end()
        return
      }
      requests.push({ headers: req.headers, body })
      const answer = () => {
        if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
          res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized" }))
          return
        }
        if (options.failWith !== undefined) {
          res.writeHead(options.failWith, { "content-type": "application/json" }).end(JSON.stringify({ error: "unavailable" }))
          return
        }
        const perParcel = options.perParcelMinor ?? 500
        const perKg = options.perKgMinor ?? 100
        const quotes = body.parcels
          .filter((p) => !(options.skip?.(p.reference) ?? false))
          .map((p) => ({ reference: p.reference, amountMinor: Math.round(perParcel * p.count + perKg * p.weight_kg) }))
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({ currency: options.currency ?? body.currency, quotes })
        )
      }
      if (options.delayMs === undefined || options.delayMs <= 0) answer()
      else {
        const timer = setTimeout(() => {
          timers.delete(timer)
          if (!res.destroyed) answer()
        }, options.delayMs)
        timers.add(timer)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/quotes`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t)
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
