import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** One span as an OTLP/HTTP collector receives it, its attributes flattened to values. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
  readonly service: string | undefined
}

/** An OTLP AnyValue as the JSON encoding writes it. */
type AnyValue = {
  readonly stringValue?: string
  readonly intValue?: string | number
  readonly doubleValue?: number
  readonly boolValue?: boolean
  readonly arrayValue?: { readonly values?: ReadonlyArray<AnyValue> }
}
type KeyValue = { readonly key: string; readonly value: AnyValue }

const valueOf = (v: AnyValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ??
    v.arrayValue?.values?.map(valueOf)

const flatten = (attributes: ReadonlyArray<KeyValue> | undefined): Record<string, unknown> =>
  Object.fromEntries((attributes ?? []).map((a) => [a.key, valueOf(a.value)]))

/**
 * A collector on loopback that takes OTLP/HTTP trace exports
 * (`POST /v1/traces`, the JSON encoding of `ExportTraceServiceRequest`) and
 * keeps every span it decodes; the exporter gets the answer a collector gives.
 */
export const startOtlpReceiver = async () => {
  const spans: Array<ReceivedSpan> = []
  const requests: Array<{ readonly path: string; readonly contentType: string | undefined; readonly headers: http.IncomingHttpHeaders }> = []
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      requests.push({ path: req.url ?? "", contentType: req.headers["content-type"], headers: req.headers })
      if (req.method !== "POST" || req.url !== "/v1/traces" || !req.headers["content-type"]?.startsWith("application/json")) {
        res.writeHead(404).end()
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        readonly resourceSpans: ReadonlyArray<{
          readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
          readonly scopeSpans: ReadonlyArray<{
            readonly spans: ReadonlyArray<{
              readonly traceId: string
              readonly spanId: string
              readonly parentSpanId?: string
              readonly name: string
              readonly kind: number
              readonly attributes?: ReadonlyArray<KeyValue>
            }>
          }>
        }>
      }
      for (const rs of body.resourceSpans) {
        const service = flatten(rs.resource?.attributes)["service.name"] as string | undefined
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId === undefined || s.parentSpanId === "" ? undefined : s.parentSpanId,
              name: s.name,
              kind: s.kind,
              attributes: flatten(s.attributes),
              service
            })
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    /** The spans of one trace once `accept` holds for them (the exporter sends in batches). */
    trace: async (traceId: string, accept: (spans: ReadonlyArray<ReceivedSpan>) => boolean, waitMs = 30_000) => {
      const deadline = Date.now() + waitMs
      for (;;) {
        const found = spans.filter((s) => s.traceId === traceId)
        if (accept(found)) return found
        if (Date.now() > deadline) throw new Error(`trace ${traceId} never complete; received ${JSON.stringify(found)}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
