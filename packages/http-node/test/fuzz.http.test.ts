import fc from "fast-check"
import * as fs from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Limits } from "@opsplatform/core"
import { type Fixture, makeFixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import {
  arbitraryFor,
  badIds,
  datePaths,
  edgeFor,
  extremeDates,
  hostileValue,
  type IdPool,
  longAttacks,
  type OpenApiDocument,
  type Operation,
  operationsOf,
  type PatternTarget,
  patternTargets,
  queryValueFor,
  replaceNode,
  signatureOf,
  tamperedCursors,
  withDates,
  withValueAt
} from "./support/fuzz.ts"
import { matrixFactories } from "./support/matrix.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

/**
 * The API fuzzes itself from its own OpenAPI document: every operation the
 * server serves gets requests derived from its schemas plus hostile values, on
 * a real server, and every answer must be an answer the contract allows —
 * never a 5xx it does not document, always the envelope (or the documented
 * empty body), always X-Request-Id, and a 2xx write reads back equal.
 *
 * FUZZ_RUNS (default 6) sets the runs per operation, FUZZ_SEED replays a run
 * (the seed is in the test's name and in every failure), FUZZ_OPS (a regular
 * expression over operation ids) narrows it, FUZZ_SHRINK=1 shrinks failures.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 6)
const SEED = process.env.FUZZ_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED)

/** The order operations run in: reads, then writes, then actions that end a resource's life, then deletes. */
const phase = (op: Operation) =>
  op.method === "GET" ? 0 : op.method === "DELETE" ? 3 : op.method === "POST" && /\}\/[\w-]+$/.test(op.path) ? 2 : 1

/** Raw bodies no schema describes: not JSON, not UTF-8, too deep, too big. */
const rawBodies: ReadonlyArray<string | Uint8Array> = [
  "",
  "{",
  "null",
  "[]",
  "\"x\"",
  "1e999",
  "{\"a\":1,\"a\":2}",
  "\ufeff{}",
  new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
  "[".repeat(100_000) + "]".repeat(100_000),
  "[".repeat(5000) + "]".repeat(5000),
  `{"a":${"{\"a\":".repeat(5000)}1${"}".repeat(5000)}}`,
  JSON.stringify({ name: "x".repeat(Limits.MAX_BODY_BYTES) })
]

/**
 * Percent-encodes as a client would, and a lone surrogate (which UTF-8 cannot
 * hold) as the three bytes a careless encoder writes for it (ED A0 80…).
 */
const encode = (text: string) =>
  text.replace(/[\s\S]/gu, (ch) => {
    try {
      return encodeURIComponent(ch)
    } catch {
      const c = ch.charCodeAt(0)
      return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join("")
    }
  })

interface Sent {
  readonly method: string
  readonly path: string
  readonly body: string | Uint8Array | undefined
}

const describeSent = (sent: Sent) => {
  const body = sent.body === undefined
    ? ""
    : typeof sent.body === "string"
    ? ` ${sent.body.length > 200 ? `${sent.body.slice(0, 200)}… (${sent.body.length} chars)` : sent.body}`
    : ` <${sent.body.length} raw bytes>`
  return `${sent.method} ${sent.path.length > 300 ? `${sent.path.slice(0, 300)}…` : sent.path}${body}`
}

describe("the limits the fuzz suite aims at", () => {
  it("are the ones the table in docs/decisions.md states", () => {
    const table = fs.readFileSync(new URL("../../../docs/decisions.md", import.meta.url), "utf8")
    const section = table.slice(table.indexOf("## Limits and ranges"))
    for (const figure of [
      `\`${Limits.DATE_MIN}\` … \`${Limits.DATE_MAX}\``,
      `\`${Limits.INSTANT_MIN}\` … \`${Limits.INSTANT_MAX}\``,
      `${Limits.MAX_BODY_BYTES / 1024 / 1024} MiB`,
      `${Limits.MAX_JSON_DEPTH} levels`,
      `1 … ${Limits.MAX_PER_PAGE}`,
      `1 … ${Limits.MAX_PAGE.toLocaleString("en").replace(/,/g, " ")}`,
      `${Limits.MAX_AMOUNT_INTEGER_DIGITS} integer digits`,
      `${Limits.MAX_EVENT_PAYLOAD_BYTES / 1024} KiB`
    ]) {
      expect(section).toContain(figure)
    }
  })
})

for (const db of testDatabases()) {
  describe(`fuzzing every operation of the served OpenAPI document (${db.name}, seed ${SEED}, ${RUNS} runs each)`, () => {
    let server: TestServer
    let owner: Fixture
    let doc: OpenApiDocument
    let operations: ReadonlyArray<Operation>
    /** Every GET template the document serves, whatever FUZZ_OPS narrows the run to (read-backs need them). */
    let getTemplates: ReadonlySet<string>
    const resources = new Map<string, Record<string, string>>()
    const pool: Record<string, Array<string>> = {}

    beforeAll(async () => {
      server = await startTestServer(db.choice())
      owner = await server.run(makeFixture("Fuzz owner"))
      const served = await fetch(`${server.url}/v1/openapi.json`)
      expect(served.status).toBe(200)
      doc = await served.json() as OpenApiDocument
      getTemplates = new Set(operationsOf(doc).filter((o) => o.method === "GET").map((o) => o.path))
      const only = process.env.FUZZ_OPS === undefined ? undefined : new RegExp(process.env.FUZZ_OPS)
      operations = [...operationsOf(doc)].filter((o) => only === undefined || only.test(o.id)).sort((a, b) => phase(a) - phase(b))
      for (const group of new Set(operations.map((o) => o.group))) {
        const factory = matrixFactories[group]?.create
        if (factory) resources.set(group, await factory(server, owner))
      }
      const add = (field: string, id: string | undefined) => {
        if (id !== undefined) (pool[field] ??= []).push(id)
      }
      add("contact_id", (await factoryId("contacts")))
      add("contract_id", resources.get("contracts")?.id)
      add("invoice_id", resources.get("invoices")?.id)
      add("location_id", resources.get("locations")?.id)
      add("start_location_id", resources.get("locations")?.id)
      add("vehicle_id", resources.get("fleet")?.id)
      add("stop_ids", resources.get("routes")?.stopId)
      add("stop_id", resources.get("routes")?.stopId)
    }, 180_000)
    afterAll(() => server?.close())

    const factoryId = async (group: string) => resources.get(group)?.id

    /** Sends one request with the all-scopes key of the owner's live environment. */
    const send = async (sent: Sent, token = owner.tokens.api) => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` }
      if (sent.body !== undefined) headers["content-type"] = "application/json"
      const response = await fetch(`${server.url}${sent.path}`, {
        method: sent.method,
        headers,
        ...(sent.body !== undefined ? { body: sent.body } : {})
      })
      const text = await response.text()
      return { status: response.status, headers: response.headers, text }
    }

    const gets = () => getTemplates

    /** Where a 2xx write can be read back: the same path, the created item under the collection, or the item an action acted on. */
    const readBackPath = (op: Operation, concrete: string, data: any): string | undefined => {
      if (data === null || typeof data !== "object" || Array.isArray(data)) return undefined
      const templates = gets()
      if (op.method !== "POST" && templates.has(op.path)) return concrete
      if (op.method === "POST" && typeof data.id === "string") {
        const item = [...templates].find((t) => t.startsWith(`${op.path}/{`) && /^\/\{\w+\}$/.test(t.slice(op.path.length)))
        if (item !== undefined) return `${concrete}/${data.id}`
        const action = /^(.*\/\{\w+\})\/[\w-]+$/.exec(op.path)
        if (action !== null && templates.has(action[1]!)) {
          const parent = concrete.split("/").slice(0, -1).join("/")
          if (parent.endsWith(`/${data.id}`)) return parent
        }
      }
      return undefined
    }

    /** What the run saw: statuses by class, read-backs done, operations that answered some 2xx. */
    const stats = { byClass: new Map<string, number>(), readBacks: 0, succeeded: new Set<string>() }

    /** Every rule an answer must keep; the reason it broke one, or undefined. */
    const check = async (op: Operation, sent: Sent, res: Awaited<ReturnType<typeof send>>): Promise<string | undefined> => {
      const requestId = res.headers.get("x-request-id")
      const statusClass = `${String(res.status)[0]}xx`
      stats.byClass.set(statusClass, (stats.byClass.get(statusClass) ?? 0) + 1)
      if (res.status < 300) stats.succeeded.add(op.id)
      if (res.status >= 500 && op.responses[String(res.status)] === undefined) return `answered ${res.status}: ${res.text.slice(0, 500)}`
      if (requestId === null || !/^req_[0-9a-f]{24}$/.test(requestId)) return `answered ${res.status} without X-Request-Id`
      if (res.text === "") {
        const documented = op.responses[String(res.status)]
        return res.status === 204 || (documented !== undefined && !documented.json) ? undefined : `answered ${res.status} with an empty body`
      }
      // An operation that documents a CSV answer (import errors) may give it on success.
      if (res.status < 300 && (res.headers.get("content-type") ?? "").startsWith("text/csv") && op.id === "imports.errors") return undefined
      let json: any
      try {
        json = JSON.parse(res.text)
      } catch {
        return `answered ${res.status} with a body that is not JSON: ${res.text.slice(0, 200)}`
      }
      if (json === null || typeof json !== "object" || !("data" in json) || !("error" in json)) {
        return `answered ${res.status} outside the envelope: ${res.text.slice(0, 300)}`
      }
      if (res.status >= 400) {
        if (json.data !== null || typeof json.error?.code !== "string" || typeof json.error?.message !== "string") {
          return `answered ${res.status} with a malformed error: ${res.text.slice(0, 300)}`
        }
        if (json.error.requestId !== requestId) return `answered ${res.status} with error.requestId ${json.error.requestId} ≠ ${requestId}`
        return undefined
      }
      if (json.error !== null) return `answered ${res.status} with an error: ${res.text.slice(0, 300)}`
      if (op.method === "DELETE" && gets().has(op.path)) {
        const after = await send({ method: "GET", path: sent.path, body: undefined })
        stats.readBacks++
        if (after.status !== 404) return `deleted (${res.status}), yet GET ${sent.path} answers ${after.status}`
        return undefined
      }
      if (op.method !== "GET") {
        const path = readBackPath(op, sent.path, json.data)
        if (path === undefined) return undefined
        const read = await send({ method: "GET", path, body: undefined })
        stats.readBacks++
        if (read.status !== 200) return `wrote (${res.status}), yet GET ${path} answers ${read.status}: ${read.text.slice(0, 300)}`
        const stored = JSON.parse(read.text).data
        const written = Object.fromEntries(Object.keys(stored).map((k) => [k, json.data[k]]))
        try {
          expect(stored).toEqual(written)
        } catch (e) {
          return `wrote (${res.status}), but GET ${path} reads back otherwise: ${String((e as Error).message).slice(0, 1500)}`
        }
      }
      return undefined
    }

    /**
     * One request for `op`: half of them valid as far as the schemas tell
     * (seeded ids, the matrix's example bodies or values from the body schema),
     * the other half the same with exactly one part made hostile — a path id,
     * a query parameter, an unknown parameter, a node of the body, or the
     * whole raw body — so a refusal names the part that caused it.
     */
    const requestFor = (op: Operation): fc.Arbitrary<Sent> => {
      const own = resources.get(op.group) ?? {}
      const pathParams = op.parameters.filter((p) => p.in === "path")
      const queryParams = op.parameters.filter((p) => p.in === "query" && p.name !== "cursor")
      const cursorParam = op.parameters.some((p) => p.in === "query" && p.name === "cursor")
      const example = matrixFactories[op.group]?.bodies?.[op.id.split(".")[1]!]
      const hasBody = op.method !== "GET" && op.body !== undefined
      const validBody: fc.Arbitrary<unknown> = !hasBody
        ? fc.constant(undefined)
        : example === undefined
        ? arbitraryFor(doc, op.body!, { pool: pool as IdPool, hostility: 0 })
        : fc.oneof(
          { weight: 2, arbitrary: fc.constant(example) },
          // The example with one node given another value its schema allows.
          { weight: 2, arbitrary: fc.tuple(arbitraryFor(doc, op.body!, { pool: pool as IdPool, hostility: 0 }), fc.nat()).map(([other, i]) =>
            other !== null && typeof other === "object" && !Array.isArray(other) && Object.keys(other).length > 0
              ? (() => {
                const key = Object.keys(other)[i % Object.keys(other).length]!
                return { ...(example as object), [key]: (other as Record<string, unknown>)[key] }
              })()
              : example) },
          { weight: 1, arbitrary: arbitraryFor(doc, op.body!, { pool: pool as IdPool, hostility: 0 }) }
        )
      const validQuery = fc.tuple(...queryParams.map((p) =>
        p.required ? queryValueFor(doc, p, pool as IdPool, false) : fc.option(queryValueFor(doc, p, pool as IdPool, false), { nil: undefined, freq: 2 })
      ))
      type Target = { kind: "path" | "query"; index: number } | { kind: "extra" | "body" | "edge" | "dates" | "raw" | "cursor" }
      const targets: Array<Target> = [
        ...pathParams.map((_, index) => ({ kind: "path" as const, index })),
        ...queryParams.map((_, index) => ({ kind: "query" as const, index })),
        { kind: "extra" as const },
        ...(cursorParam ? [{ kind: "cursor" as const }] : []),
        ...(hasBody ? [{ kind: "body" as const }, { kind: "edge" as const }, { kind: "edge" as const }] : []),
        ...(op.method !== "GET" ? [{ kind: "raw" as const }] : [])
      ]
      const dates = hasBody ? datePaths(doc, op.body!) : []
      if (dates.length > 0) targets.push({ kind: "dates" }, { kind: "dates" })
      const hostileQueries = queryParams.map((p) => queryValueFor(doc, p, pool as IdPool, true))
      const hostilePart = fc.constantFrom(...targets).chain((t) => {
        switch (t.kind) {
          case "path":
            return fc.oneof(fc.constantFrom(...badIds), fc.uuid()).map((v) => ({ t, v: v as unknown }))
          case "query":
            return hostileQueries[t.index]!.map((v) => ({ t, v: v as unknown }))
          case "cursor":
            return fc.constantFrom(...tamperedCursors).map((v) => ({ t, v: v as unknown }))
          case "extra":
            return fc.constantFrom("unknown_param=1", "page=1&page=2", "%ff=1", "a[]=1&a[]=2", `${"q".repeat(20_000)}=1`).map((v) => ({ t, v: v as unknown }))
          case "body":
            return fc.tuple(fc.nat(), hostileValue).map(([i, h]) => ({ t, v: [i, h] as unknown }))
          case "edge":
            return edgeFor(doc, op.body!, { pool: pool as IdPool, base: validBody }).map((v) => ({ t, v }))
          case "dates":
            return fc.constantFrom(...extremeDates).map((v) => ({ t, v: v as unknown }))
          case "raw":
            return fc.constantFrom(...rawBodies).map((v) => ({ t, v: v as unknown }))
        }
      })
      const parts = fc.tuple(validQuery, validBody, fc.option(hostilePart, { nil: undefined, freq: 2 }))
      return parts.map(([queryValues, body, hostile]): Sent => {
        const pathValues = pathParams.map((p) => own[p.name] ?? "00000000-0000-4000-8000-000000000001")
        const query: Array<string | undefined> = queryParams.map((p, i) =>
          queryValues[i] === undefined ? undefined : `${encode(p.name)}=${encode(queryValues[i]!)}`
        )
        let text: string | Uint8Array | undefined = body === undefined ? undefined : JSON.stringify(body)
        if (hostile !== undefined) {
          const { t, v } = hostile
          if (t.kind === "path") pathValues[t.index] = v as string
          if (t.kind === "query") query[t.index] = `${encode(queryParams[t.index]!.name)}=${encode(v as string)}`
          if (t.kind === "cursor") query.push(`cursor=${encode(v as string)}`)
          if (t.kind === "extra") query.push(v as string)
          if (t.kind === "body") text = JSON.stringify(replaceNode(body, (v as [number, unknown])[0], (v as [number, unknown])[1])) ?? "null"
          if (t.kind === "edge") text = JSON.stringify(v) ?? "null"
          if (t.kind === "dates") text = JSON.stringify(withDates(body, dates, v as string))
          if (t.kind === "raw") text = v as string | Uint8Array
        }
        let path = op.path
        pathParams.forEach((p, i) => {
          path = path.replace(`{${p.name}}`, encode(pathValues[i]!).replace(/%25/g, "%"))
        })
        const search = query.filter((q): q is string => q !== undefined)
        return { method: op.method, path: search.length > 0 ? `${path}?${search.join("&")}` : path, body: text }
      })
    }

    it("covers every operation the document lists, each with a resource to address", () => {
      if (process.env.FUZZ_OPS === undefined) expect(operations.length).toBeGreaterThan(100)
      const unaddressed = operations.filter((o) => o.parameters.some((p) => p.in === "path") && !resources.has(o.group))
      expect(unaddressed.map((o) => o.id)).toEqual([])
    })

    it("never answers a 5xx, always the envelope and X-Request-Id, and reads 2xx writes back equal", async () => {
      const failures: Array<string> = []
      let sentCount = 0
      const started = Date.now()
      for (const [index, op] of operations.entries()) {
        const seed = SEED + index
        let last = ""
        try {
          await fc.assert(
            fc.asyncProperty(requestFor(op), async (sent) => {
              sentCount++
              const res = await send(sent)
              if (process.env.FUZZ_LOG !== undefined) console.info(`${res.status} ${describeSent(sent)}`)
              const broken = await check(op, sent, res)
              if (broken !== undefined) {
                last = `${broken} ← ${describeSent(sent)}`
                throw new Error(last)
              }
            }),
            { numRuns: RUNS, seed, endOnFailure: process.env.FUZZ_SHRINK === undefined }
          )
        } catch (e) {
          failures.push(`${op.id} (FUZZ_SEED=${SEED}, operation seed ${seed}): ${last === "" ? String((e as Error).message).slice(0, 2000) : last}`)
        }
      }
      console.info(
        `fuzz (${db.name}): ${operations.length} operations, ${sentCount} requests in ${Date.now() - started} ms, seed ${SEED}; ` +
          `statuses ${JSON.stringify(Object.fromEntries(stats.byClass))}, ${stats.readBacks} read-backs, ` +
          `${stats.succeeded.size} operations answered 2xx; never: ${operations.filter((o) => !stats.succeeded.has(o.id)).map((o) => o.id).join(" ")}`
      )
      expect(failures).toEqual([])
    }, 300_000)

    /**
     * The timing check: every string field the document gives a `pattern` or
     * a `format` gets long values shaped to make a super-linear pattern
     * backtrack (see `longAttacks`), 1 MiB where the body takes it and as
     * long as the URL allows in a path or query parameter, growing 16 KiB →
     * 128 KiB → the most so a super-linear pattern fails early, not after
     * minutes. Each answer must come within 100 ms while /healthz, asked over
     * and over meanwhile, answers within 50 ms, and the server's event loop
     * (in this process: `monitorEventLoopDelay`) is never held for more than
     * 50 ms. On a loaded machine the bounds grow to three times what a
     * benign request of the same size costs at that moment (measured first,
     * and again before a retry); an attempt over them is retried twice, so
     * only what is reliably slow fails — a quadratic pattern at 16 KiB holds
     * the loop for hundreds of milliseconds every time.
     */
    it("answers a long adversarial value of every field with a pattern or format in time, while /healthz stays quick", async () => {
      const targets = patternTargets(doc, operations)
      if (process.env.FUZZ_OPS === undefined) expect(targets.length).toBeGreaterThan(150)
      const histogram = monitorEventLoopDelay({ resolution: 5 })
      histogram.enable()
      const URL_BUDGET = 15_000
      const idOf = (op: Operation, name: string) => resources.get(op.group)?.[name] ?? "00000000-0000-4000-8000-000000000001"
      const pathOf = (op: Operation, own?: { readonly name: string; readonly value: string }) =>
        op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(own?.name === name ? own.value : idOf(op, name)))
      const exampleOf = (op: Operation) => matrixFactories[op.group]?.bodies?.[op.id.split(".")[1]!] ?? {}
      const sentFor = (target: PatternTarget, value: string): Sent => {
        const { op } = target
        const name = String(target.path[0])
        switch (target.in) {
          case "path":
            return { method: op.method, path: pathOf(op, { name, value }), body: undefined }
          case "query":
            return { method: op.method, path: `${pathOf(op)}?${encodeURIComponent(name)}=${encodeURIComponent(value)}`, body: undefined }
          case "body":
            return { method: op.method, path: pathOf(op), body: JSON.stringify(withValueAt(exampleOf(op), target.path, value)) }
        }
      }
      /** The longest value the limits let through for the target: the body's 1 MiB, or the URL's room. */
      const maxLength = (target: PatternTarget, attack: string) => {
        if (target.in === "body") {
          const rest = Buffer.byteLength(JSON.stringify(withValueAt(exampleOf(target.op), target.path, "")))
          return Math.floor((Limits.MAX_BODY_BYTES - rest - 16) * attack.length / Buffer.byteLength(JSON.stringify(attack)))
        }
        return Math.floor((URL_BUDGET - target.op.path.length) * attack.length / encodeURIComponent(attack).length)
      }

      const measure = async (sent: Sent) => {
        let done = false
        const health: Array<number> = []
        const probe = (async () => {
          while (!done) {
            const started = performance.now()
            await (await fetch(`${server.url}/healthz`)).arrayBuffer()
            health.push(performance.now() - started)
          }
        })()
        histogram.reset()
        const started = performance.now()
        const res = await send(sent)
        const latency = performance.now() - started
        const blocked = histogram.max / 1e6
        done = true
        await probe
        return { status: res.status, latency, health: Math.max(0, ...health), blocked }
      }
      const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
      /** The bounds now: the targets, or three times what a benign request of the same size costs at this moment. */
      const calibrate = async () => {
        const benign = await Promise.resolve().then(async () => {
          const runs = []
          for (let i = 0; i < 3; i++) {
            runs.push(await measure({ method: "POST", path: "/v1/locations", body: JSON.stringify({ name: "x".repeat(Limits.MAX_BODY_BYTES - 32) }) }))
          }
          return runs
        })
        return {
          latency: Math.max(100, 3 * median(benign.map((b) => b.latency))),
          health: Math.max(50, 3 * median(benign.map((b) => b.health))),
          blocked: Math.max(50, 3 * median(benign.map((b) => b.blocked)))
        }
      }
      let bounds = await calibrate()
      const calibrated = { ...bounds }

      const failures: Array<string> = []
      const searched = new Set<string>()
      let sentCount = 0
      let retries = 0
      let slowest = { latency: 0, health: 0, blocked: 0 }
      const started = Date.now()
      for (const target of targets) {
        const signature = `${target.in === "body" ? "body" : "url"}|${signatureOf(target.schema)}`
        // Every field gets the first attack at full length; the first field of each kind gets every attack, growing.
        const full = !searched.has(signature)
        searched.add(signature)
        const shapes = longAttacks(target.schema, 1024, full ? 12 : 1)
        for (const [index, shape] of shapes.entries()) {
          const most = maxLength(target, shape)
          const lengths = full ? [...new Set([Math.min(16 * 1024, most), Math.min(128 * 1024, most), most])] : [most]
          let failed = false
          for (const length of lengths) {
            const value = longAttacks(target.schema, length, index + 1)[index]!
            const sent = sentFor(target, value)
            let last = { status: 0, latency: 0, health: 0, blocked: 0 }
            let ok = false
            for (let attempt = 0; attempt < 3 && !ok; attempt++) {
              if (attempt > 0) {
                retries++
                bounds = await calibrate()
              }
              sentCount++
              last = await measure(sent)
              ok = last.status < 500 && last.latency <= bounds.latency && last.health <= bounds.health && last.blocked <= bounds.blocked
            }
            slowest = {
              latency: Math.max(slowest.latency, last.latency),
              health: Math.max(slowest.health, last.health),
              blocked: Math.max(slowest.blocked, last.blocked)
            }
            if (!ok) {
              failures.push(
                `${target.op.id} ${target.in} ${target.path.join(".")} (${signatureOf(target.schema)}): ${length} characters ` +
                  `${JSON.stringify(value.slice(0, 12))}…${JSON.stringify(value.slice(-4))} answered ${last.status} in ${last.latency.toFixed(0)} ms ` +
                  `(bound ${bounds.latency.toFixed(0)}), /healthz took up to ${last.health.toFixed(0)} ms (bound ${bounds.health.toFixed(0)}), ` +
                  `the event loop was held ${last.blocked.toFixed(0)} ms (bound ${bounds.blocked.toFixed(0)}) — ${describeSent({ ...sent, body: undefined })}`
              )
              failed = true
              break
            }
          }
          if (failed) break
        }
      }
      histogram.disable()
      console.info(
        `fuzz timing (${db.name}): ${targets.length} fields with a pattern or format, ${searched.size} kinds, ${sentCount} requests ` +
          `(${retries} retried) in ${Date.now() - started} ms; bounds at first ${JSON.stringify(roundAll(calibrated))}; ` +
          `slowest ${JSON.stringify(roundAll(slowest))}`
      )
      expect(failures).toEqual([])
    }, 600_000)
  })
}

const roundAll = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round(v * 10) / 10]))
