import * as http from "node:http"
import { performance } from "node:perf_hooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { Agent, authorizeUrl, hiddenField, pkce, registerApp } from "./oauth/support.ts"
import { testDatabases } from "./support/databases.ts"
import { seedFixture, startTestServer, type TestServer } from "./support/server.ts"

/**
 * One request must never stall everyone (issue 28): while 20 unauthenticated
 * 15 MB uploads are kept in flight and 200 sign-ins with new emails arrive in
 * 10 s, an authenticated `GET /v1/locations` keeps a p99 under three times
 * its idle p99. Both are measured in the same run, one after the other, so the
 * machine's load weighs on both; the idle figure is the larger of a
 * measurement before and one after the load (the machine is shared and its
 * idle moves), and a run over the bound is measured again, twice at most.
 *
 * The sign-ins come through a trusted proxy (`OPSPLATFORM_TRUSTED_PROXIES`)
 * each from a network of its own, so the per-network limit lets every one of
 * them ask for a derivation: what bounds the work is the hashing pool.
 */

const UPLOADS = 20
const UPLOAD_BYTES = 15 * 1024 * 1024
const SIGN_INS = 200
const WINDOW_MS = 10_000
const IDLE_SAMPLES = 300
const RATIO = 3

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 })

/** One authenticated `GET /v1/locations` on a kept-alive connection; its time in ms. */
const timedList = (server: TestServer, token: string) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const request = http.get(`${server.url}/v1/locations`, { agent: keepAlive, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume()
      res.on("end", () => {
        if (res.statusCode !== 200) reject(new Error(`GET /v1/locations answered ${res.statusCode}`))
        else resolve(performance.now() - started)
      })
    })
    request.on("error", reject)
  })

const sequentialLists = async (server: TestServer, token: string, until: () => boolean) => {
  const times: Array<number> = []
  while (!until()) times.push(await timedList(server, token))
  return times
}

const body = Buffer.alloc(UPLOAD_BYTES, "a,b\n")

/** A 15 MB CSV upload without credentials; the status, or 0 when the connection ended first. */
const upload = (server: TestServer) =>
  new Promise<number>((resolve) => {
    const request = http.request(`${server.url}/v1/imports?entity=contacts`, {
      method: "POST",
      headers: { "content-type": "text/csv", "content-length": String(UPLOAD_BYTES) }
    }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
      res.on("error", () => resolve(res.statusCode ?? 0))
    })
    request.on("error", () => resolve(0))
    request.end(body)
  })

/** An authorize request from its own network, up to the sign-in form: what the POST needs. */
const signInForm = async (server: TestServer, clientId: string, challenge: string, network: string) => {
  const agent = new Agent(server.url)
  const forwarded = { "x-forwarded-for": network }
  const start = await fetch(new URL(authorizeUrl({ client_id: clientId, redirect_uri: "http://127.0.0.1:7777/callback", scope: "locations:read", code_challenge: challenge }), server.url), {
    redirect: "manual",
    headers: forwarded
  })
  const cookie = start.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ")
  for (const part of cookie.split("; ")) {
    const eq = part.indexOf("=")
    if (eq > 0) agent.cookies.set(part.slice(0, eq), part.slice(eq + 1))
  }
  if (start.status !== 303) throw new Error(`authorize answered ${start.status}: ${await start.text()}`)
  const page = await agent.get(start.headers.get("location")!)
  return {
    send: async (email: string) => {
      const response = await fetch(new URL("/api/oauth/sign-in", server.url), {
        method: "POST",
        redirect: "manual",
        headers: {
          ...forwarded,
          "content-type": "application/x-www-form-urlencoded",
          cookie: [...agent.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
        },
        body: new URLSearchParams({
          request: hiddenField(page.text, "request"),
          csrf: hiddenField(page.text, "csrf"),
          email,
          password: "not the password of anyone at all"
        }).toString()
      })
      await response.text()
      return response.status
    }
  }
}

for (const db of testDatabases()) {
  describe(`one request never stalls everyone (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    let clientId: string
    beforeAll(async () => {
      server = await startTestServer(db.choice(), {
        env: { OPSPLATFORM_TRUSTED_PROXIES: "127.0.0.1", OPSPLATFORM_OAUTH_PER_NETWORK_PER_MIN: "30" }
      })
      f = await seedFixture(server)
      clientId = (await registerApp(server, null)).client_id
    }, 120_000)
    afterAll(async () => {
      keepAlive.destroy()
      await server.close()
    })

    it("keeps GET /v1/locations under three times its idle p99 while uploads and sign-ins pour in", async () => {
      const { challenge } = await pkce()
      const runs: Array<Record<string, number>> = []
      for (let run = 0; run < 3; run++) {
        // Warm the connection, the credential cache and the query plans.
        await sequentialLists(server, f.tokens.api, ((n) => () => n-- <= 0)(50))
        const idleBefore = await sequentialLists(server, f.tokens.api, ((n) => () => n-- <= 0)(IDLE_SAMPLES))
        // Each sign-in from a network of its own (198.18.0.0/15, benchmarking addresses), with a new email.
        const forms = []
        for (let i = 0; i < SIGN_INS; i++) {
          forms.push(await signInForm(server, clientId, challenge, `198.${18 + (run & 1)}.${Math.floor(i / 250)}.${(i % 250) + 1}`))
        }
        let stopped = false
        const uploads: Array<number> = []
        const uploaders = Array.from({ length: UPLOADS }, async () => {
          while (!stopped) uploads.push(await upload(server))
        })
        const signIns: Array<Promise<number>> = []
        const started = performance.now()
        const pacer = (async () => {
          for (let i = 0; i < SIGN_INS; i++) {
            const due = started + (i * WINDOW_MS) / SIGN_INS
            const wait = due - performance.now()
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
            signIns.push(forms[i]!.send(`load-${run}-${i}-${f.organizationId}@example.test`))
          }
        })()
        const loaded = await sequentialLists(server, f.tokens.api, () => performance.now() - started >= WINDOW_MS)
        stopped = true
        await pacer
        const statuses = await Promise.all(signIns)
        await Promise.all(uploaders)
        const idleAfter = await sequentialLists(server, f.tokens.api, ((n) => () => n-- <= 0)(IDLE_SAMPLES))

        // What the server answered: refusals, never a failure of its own.
        expect(uploads.every((s) => s === 401 || s === 0), `upload statuses ${[...new Set(uploads)]}`).toBe(true)
        expect(uploads.filter((s) => s === 401).length).toBeGreaterThan(0)
        expect(statuses.every((s) => s === 401 || s === 429 || s === 503), `sign-in statuses ${[...new Set(statuses)]}`).toBe(true)

        const idle = Math.max(percentile(idleBefore, 99), percentile(idleAfter, 99))
        const figures = {
          idleP99: idle,
          loadedP99: percentile(loaded, 99),
          loadedP50: percentile(loaded, 50),
          loadedRequests: loaded.length,
          uploads: uploads.length,
          signInsChecked: statuses.filter((s) => s === 401).length,
          signInsBusy: statuses.filter((s) => s === 503).length
        }
        runs.push(figures)
        console.info(`load (${db.name}) run ${run + 1}: ${JSON.stringify(figures)}`)
        if (figures.loadedP99 < RATIO * idle) break
      }
      const last = runs[runs.length - 1]!
      expect(last.loadedP99, JSON.stringify(runs)).toBeLessThan(RATIO * last.idleP99)
    }, 600_000)
  })
}
