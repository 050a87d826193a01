/**
 * Mounting the /v1 API inside your own Node `http` server: the web handler
 * takes a Fetch `Request` and returns a `Response`; here it answers under
 * `/api`, next to the host's own routes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { Readable } from "node:stream"
import { makeWebHandler } from "@opsplatform/http-node"

const toRequest = (req: IncomingMessage, base: string, strip: string): Request => {
  const url = new URL(req.url!.slice(strip.length) || "/", base)
  const hasBody = req.method !== "GET" && req.method !== "HEAD"
  return new Request(url, {
    method: req.method!,
    headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : v === undefined ? [] : [[k, v]])) as Array<[string, string]>,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {})
  } as RequestInit)
}

const send = async (response: Response, res: ServerResponse) => {
  res.writeHead(response.status, Object.fromEntries(response.headers))
  res.end(Buffer.from(await response.arrayBuffer()))
}

export const startHost = async (port: number, database?: Parameters<typeof makeWebHandler>[0]) => {
  const api = makeWebHandler(database)
  const server: Server = createServer((req, res) => {
    if (req.url === "/" || req.url === "/hello") {
      res.writeHead(200, { "content-type": "text/plain" }).end("the host's own route\n")
      return
    }
    if (req.url?.startsWith("/api/")) {
      api.handler(toRequest(req, `http://${req.headers.host ?? "localhost"}`, "/api")).then((r) => send(r, res), (e) => {
        res.writeHead(500).end(String(e))
      })
      return
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const address = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await api.dispose()
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  startHost(Number(process.env.PORT ?? 3000), { database: { _tag: "EmbeddedMemory" } }).then((host) =>
    console.log(`host on ${host.url}; the API answers under ${host.url}/api/v1 and ${host.url}/api/healthz`)
  )
}
