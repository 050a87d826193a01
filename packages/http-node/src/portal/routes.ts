import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Duration, Effect, Option, Result, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Pagination, PortalSessions, Scopes, WebhookModel, WebhookRules, Webhooks } from "@opsplatform/core"
import { issueDetails } from "../api/schemaErrors.ts"
import { issuerOf } from "../oauth/protocol.ts"
import { newNonce } from "../pages/csp.ts"
import { CSRF_FIELD, csrfMatches, csrfToken, readFormFields } from "../pages/forms.ts"
import type { Html } from "../pages/html.ts"
import { format, LANGUAGE_COOKIE, type Locale, negotiateLocale } from "../pages/i18n.ts"
import { languageSwitch, layout, pageResponse } from "../pages/layout.ts"
import { html } from "../pages/html.ts"
import { type PortalMessages, portalMessages } from "./messages.ts"
import { portalPaths } from "./paths.ts"
import {
  catalogBody,
  confirmBody,
  type DeliveryLog,
  deliveryBody,
  type FieldErrors,
  type FormValues,
  messageBody,
  newSubscriptionBody,
  type Notice,
  type Revealed,
  subscriptionBody,
  subscriptionsBody,
  type View
} from "./views.ts"

/**
 * The webhook portal at /portal (docs/decisions.md, "Webhook portal"):
 * server-rendered pages over the same Webhooks service and scopes as
 * /v1/webhooks, for the organization environment of the portal session the
 * browser's cookie names. The one-time link is exchanged for that cookie at
 * /portal/enter; every form that changes something carries the session's
 * CSRF token.
 */

/** The browser's portal session: HttpOnly, scoped to /portal. */
export const PORTAL_COOKIE = "opsplatform_portal"
const CSRF_PURPOSE = "webhook-portal"

/** The page script, bundled at build time (scripts/bundle-pages.mjs); the pages work without it. */
const scriptPath = fileURLToPath(new URL("../../dist/assets/portal.js", import.meta.url))
const readScript = (): string | undefined => {
  try {
    return readFileSync(scriptPath, "utf8")
  } catch {
    return undefined
  }
}

interface Page {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly locale: Locale
  readonly chosen: boolean
  readonly t: PortalMessages
  readonly path: string
  readonly query: URLSearchParams
}

interface Signed extends Page {
  readonly access: PortalSessions.PortalAccess
  readonly cookie: string
  readonly view: View
}

const pageOf = Effect.map(HttpServerRequest.HttpServerRequest, (request): Page => {
  const { chosen, locale } = negotiateLocale(request)
  const url = new URL(request.url, "http://portal.invalid")
  return { request, locale, chosen, t: portalMessages(locale), path: url.pathname, query: url.searchParams }
})

const oneYear = Duration.days(365)

/** Renders a page in the portal's frame: navigation and sign-out once signed in, the session's theme and framing. */
const render = (
  page: Page,
  status: number,
  title: string,
  body: Html,
  options: { readonly access?: PortalSessions.PortalAccess | undefined; readonly csrf?: string | undefined; readonly script?: boolean } = {}
) => {
  const nonce = newNonce()
  const { access, t } = { access: options.access, t: page.t }
  const tools = html`${languageSwitch(page.locale, page.request.method === "GET" ? page.path + (page.query.size > 0 ? `?${page.query}` : "") : page.path, { ro: t.langRo, en: t.langEn, label: t.switchTo })}${
    access === undefined || options.csrf === undefined ? "" : html`<form method="post" action="${portalPaths.signOut}" class="inline"><input type="hidden" name="${CSRF_FIELD}" value="${options.csrf}"><button type="submit">${t.signOut}</button></form>`
  }`
  const document = layout({
    locale: page.locale,
    title: `${title} · ${t.brand}`,
    brand: t.brand,
    nonce,
    body,
    skipLabel: t.skip,
    navLabel: t.nav,
    nav: access === undefined ? undefined : [
      { href: portalPaths.webhooks, label: t.navEndpoints, current: page.path.startsWith(portalPaths.webhooks) },
      { href: portalPaths.events, label: t.navCatalog, current: page.path === portalPaths.events }
    ],
    tools,
    theme: access?.theme,
    scripts: options.script === false ? [] : [portalPaths.script]
  })
  const response = pageResponse(status, document, { nonce, frameAncestors: access?.frameAncestors, connectSelf: true })
  return page.chosen
    ? HttpServerResponse.setCookieUnsafe(response, LANGUAGE_COOKIE, page.locale, { path: "/", sameSite: "lax", maxAge: oneYear })
    : response
}

const redirect = (to: string) =>
  HttpServerResponse.redirect(to, { status: 303, headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" } })

/** A date input (YYYY-MM-DD) as the instant its day starts in UTC, `days` later. */
const dayStart = (date: string, days = 0): string | undefined => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined
  const ms = Date.parse(`${date}T00:00:00Z`)
  return Number.isNaN(ms) ? undefined : new Date(ms + days * 86_400_000).toISOString()
}

const decodeCreate = Schema.decodeUnknownResult(WebhookModel.WebhookSubscriptionCreate, { errors: "all" })
const decodeUpdate = Schema.decodeUnknownResult(WebhookModel.WebhookSubscriptionUpdate, { errors: "all" })
const decodeFilter = Schema.decodeUnknownResult(WebhookModel.DeliveryFilter)

/** The refusal of an address in the reader's words: private networks and plain http named, anything else quoted. */
const urlIssue = (t: PortalMessages, issue: string): string =>
  /private|loopback|local host/.test(issue) ? t.urlPrivate : /https/.test(issue) ? t.urlHttps : format(t.urlInvalid, { issue })

export const PortalRoutes = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const portal = yield* PortalSessions.PortalSessions
  const webhooks = yield* Webhooks.Webhooks
  const script = readScript()
  if (script === undefined) yield* Effect.logWarning(`The portal's script is not built (${scriptPath}); its pages work without it`)

  /** The catalog a session may use: every subscribable type, or the ones the session is limited to. */
  const offeredTypes = (access: PortalSessions.PortalAccess) =>
    Effect.map(webhooks.eventTypes, (all) => all.filter((e) => access.eventTypes === null || access.eventTypes.includes(e.type)))

  /** A page for a signed-in browser; without a live session, the page that says so. */
  const signedIn = <E, R>(handler: (s: Signed) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.gen(function*() {
      const page = yield* pageOf
      const cookie = page.request.cookies[PORTAL_COOKIE]
      const access = cookie === undefined ? Option.none() : yield* portal.authenticate(cookie)
      if (cookie === undefined || Option.isNone(access)) {
        return render(page, 401, page.t.sessionTitle, messageBody(page.t.sessionTitle, page.t.sessionEnded))
      }
      const csrf = csrfToken(CSRF_PURPOSE, cookie)
      const signed: Signed = { ...page, access: access.value, cookie, view: { t: page.t, locale: page.locale, csrf, access: access.value } }
      return yield* handler(signed).pipe(
        Effect.catchTag("NotFound" as never, () => Effect.succeed(failure(signed, 404, signed.t.notFound))),
        Effect.catchTag("Conflict" as never, (e: { readonly reason: string }) =>
          Effect.succeed(failure(signed, 409, format(signed.t.conflict, { reason: e.reason }))))
      ) as Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
    })

  const show = (s: Signed, status: number, title: string, body: Html) => render(s, status, title, body, { access: s.access, csrf: s.view.csrf })
  const failure = (s: Signed, status: number, text: string) => show(s, status, s.t.errorTitle, messageBody(s.t.errorTitle, text))

  /** A form that changes something: the session's CSRF token and the write scope, as the API's `webhooks:write`. */
  const changing = <E, R>(handler: (s: Signed, form: URLSearchParams) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    signedIn((s) =>
      Effect.gen(function*() {
        const form = yield* readFormFields
        if (!csrfMatches(CSRF_PURPOSE, s.cookie, form.get(CSRF_FIELD))) return failure(s, 403, s.t.csrf)
        if (!Scopes.hasScope(s.access.scopes, "webhooks:write")) return failure(s, 403, s.t.forbidden)
        return yield* handler(s, form)
      })
    )

  const idOf = Effect.map(HttpRouter.params, (p) => ({ id: p.id ?? "", deliveryId: p.deliveryId ?? "" }))

  /** The delivery log of a subscription as the query asks: filters, then the cursor. */
  const deliveryLog = (s: Signed, subscriptionId: string) =>
    Effect.gen(function*() {
      const q = s.query
      const filter = { status: q.get("status") ?? "", event_type: q.get("event_type") ?? "", from: q.get("from") ?? "", to: q.get("to") ?? "" }
      const asked = {
        ...(filter.status === "" ? {} : { status: filter.status }),
        ...(filter.event_type === "" ? {} : { event_type: filter.event_type }),
        ...(dayStart(filter.from) === undefined ? {} : { created_from: dayStart(filter.from) }),
        ...(dayStart(filter.to, 1) === undefined ? {} : { created_before: dayStart(filter.to, 1) })
      }
      const decoded = decodeFilter(asked)
      const deliveryFilter = Result.isSuccess(decoded) ? decoded.success : {}
      const params = new URLSearchParams(Object.entries(filter).filter(([, value]) => value !== ""))
      const here = `${portalPaths.webhook(subscriptionId)}${params.size > 0 ? `?${params}` : ""}`
      const cursor = q.get("cursor") ?? undefined
      const request = yield* Pagination.pageRequest(
        { perPage: 20, cursor },
        Pagination.listScope({ ...deliveryFilter, subscription: subscriptionId })
      ).pipe(
        Effect.catch(() => Pagination.pageRequest({ perPage: 20 }, Pagination.listScope({ ...deliveryFilter, subscription: subscriptionId })))
      )
      const page = yield* webhooks.listDeliveries(s.access.tenant, subscriptionId, deliveryFilter, request)
      const next = page.meta.nextCursor === null
        ? undefined
        : `${portalPaths.webhook(subscriptionId)}?${new URLSearchParams([...params, ["cursor", page.meta.nextCursor]])}`
      return { page, filter, here, next, isFirst: cursor === undefined } satisfies DeliveryLog
    })

  const subscriptionPage = (
    s: Signed,
    id: string,
    status: number,
    extra: {
      readonly notices?: ReadonlyArray<Notice>
      readonly revealed?: Revealed
      readonly testPayload?: unknown
      readonly values?: FormValues
      readonly errors?: FieldErrors
    } = {}
  ) =>
    Effect.gen(function*() {
      const subscription = yield* webhooks.get(s.access.tenant, id)
      const log = yield* deliveryLog(s, subscription.id)
      const done = s.query.get("done")
      const doneNotice: ReadonlyArray<Notice> = done !== null && done in doneMessages
        ? [{ kind: "success", text: s.t[doneMessages[done as keyof typeof doneMessages]] }]
        : []
      return show(s, status, subscription.url, subscriptionBody(s.view, {
        subscription,
        offered: yield* offeredTypes(s.access),
        log,
        notices: [...doneNotice, ...(extra.notices ?? [])],
        revealed: extra.revealed,
        testPayload: extra.testPayload,
        values: extra.values,
        errors: extra.errors
      }))
    })

  /** The subscription fields a form posts. */
  const formValues = (form: URLSearchParams): FormValues => ({
    url: (form.get("url") ?? "").trim(),
    description: (form.get("description") ?? "").trim(),
    eventTypes: form.getAll("event_types")
  })

  /** Field errors from the API's own schema and the session's type limit, in the reader's words. */
  const fieldErrors = (t: PortalMessages, access: PortalSessions.PortalAccess, values: FormValues, issues: ReadonlyArray<{ field: string; issue: string }>) => {
    const errors: { -readonly [K in keyof FieldErrors]: string } = {}
    for (const d of issues) {
      const name = d.field.split(".")[0]
      if (name === "url") errors.url = urlIssue(t, d.issue)
      else if (name === "description") errors.description = d.issue
      else if (name === "event_types") errors.event_types = values.eventTypes.length === 0 ? t.typesMissing : t.typesNotAllowed
    }
    if (WebhookRules.typesOutsidePortal(access.eventTypes, values.eventTypes).length > 0) errors.event_types = t.typesNotAllowed
    return errors
  }

  // ---- entering and leaving

  yield* router.add("GET", portalPaths.enter, Effect.gen(function*() {
    const page = yield* pageOf
    const token = page.query.get("token") ?? ""
    const opened = yield* Effect.result(portal.open(token))
    if (Result.isFailure(opened)) {
      const reason = opened.failure.reason
      const text = { unknown: page.t.linkUnknown, used: page.t.linkUsed, expired: page.t.linkExpired, revoked: page.t.linkRevoked }[reason]
      return render(page, opened.failure.status, page.t.linkTitle, messageBody(page.t.linkTitle, text))
    }
    const { access, cookieToken } = opened.success
    const framed = access.frameAncestors.length > 0
    const secure = framed || (yield* issuerOf).startsWith("https:")
    return HttpServerResponse.setCookieUnsafe(redirect(portalPaths.webhooks), PORTAL_COOKIE, cookieToken, {
      httpOnly: true,
      // A portal framed by another site needs its cookie sent there too, which only SameSite=None (and Secure) allows.
      sameSite: framed ? "none" : "lax",
      secure,
      path: portalPaths.root,
      expires: new Date(access.expiresAt)
    })
  }))

  yield* router.add("POST", portalPaths.signOut, changingOrReading((s) =>
    Effect.gen(function*() {
      yield* Effect.ignore(portal.revoke(s.access.tenant, s.access.id))
      const page = render(s, 200, s.t.signedOutTitle, messageBody(s.t.signedOutTitle, s.t.signedOut))
      return HttpServerResponse.expireCookieUnsafe(page, PORTAL_COOKIE, { path: portalPaths.root })
    })
  ))

  /** Sign-out needs the CSRF token but not the write scope: a read-only session may end itself. */
  function changingOrReading<E, R>(handler: (s: Signed) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) {
    return signedIn((s) =>
      Effect.gen(function*() {
        const form = yield* readFormFields
        if (!csrfMatches(CSRF_PURPOSE, s.cookie, form.get(CSRF_FIELD))) return failure(s, 403, s.t.csrf)
        return yield* handler(s)
      })
    )
  }

  // ---- the pages

  yield* router.add("GET", portalPaths.root, Effect.succeed(redirect(portalPaths.webhooks)))

  yield* router.add("GET", portalPaths.script, Effect.sync(() =>
    script === undefined
      ? HttpServerResponse.text("", { status: 404 })
      : HttpServerResponse.text(script, {
        contentType: "text/javascript; charset=utf-8",
        headers: { "cache-control": "no-cache", "x-content-type-options": "nosniff" }
      })
  ))

  yield* router.add("GET", portalPaths.webhooks, signedIn((s) =>
    Effect.gen(function*() {
      const list = yield* webhooks.list(s.access.tenant, yield* Effect.orDie(Pagination.pageRequest({ perPage: 100 })))
      const done = s.query.get("done")
      const shown: ReadonlyArray<Notice> = done === "deleted" ? [{ kind: "success", text: s.t.deleted }] : []
      return show(s, 200, s.t.endpointsTitle, subscriptionsBody(s.view, list.items, shown))
    })
  ))

  yield* router.add("GET", portalPaths.newWebhook, signedIn((s) =>
    Effect.gen(function*() {
      if (s.access.readOnly) return failure(s, 403, s.t.forbidden)
      const offered = yield* offeredTypes(s.access)
      return show(s, 200, s.t.newTitle, newSubscriptionBody(s.view, offered, { url: "", description: "", eventTypes: [] }, {}))
    })
  ))

  yield* router.add("POST", portalPaths.webhooks, changing((s, form) =>
    Effect.gen(function*() {
      const values = formValues(form)
      const input = {
        url: values.url,
        event_types: values.eventTypes,
        ...(values.description === "" ? {} : { description: values.description })
      }
      const decoded = decodeCreate(input)
      const issues = Result.isFailure(decoded) ? issueDetails(decoded.failure.issue, "body") : []
      const errors = fieldErrors(s.t, s.access, values, issues)
      const again = (e: FieldErrors) =>
        Effect.map(offeredTypes(s.access), (offered) => show(s, 400, s.t.newTitle, newSubscriptionBody(s.view, offered, values, e)))
      if (Result.isFailure(decoded) || Object.keys(errors).length > 0) return yield* again(errors)
      const created = yield* Effect.result(webhooks.create(s.access.tenant, decoded.success))
      if (Result.isFailure(created)) return yield* again(fieldErrors(s.t, s.access, values, created.failure.details))
      return yield* subscriptionPage(s, created.success.id, 201, {
        notices: [{ kind: "success", text: s.t.created }],
        revealed: { secret: { signing_scheme: created.success.signing_scheme, secret: created.success.secret, public_key: created.success.public_key } }
      })
    })
  ))

  yield* router.add("GET", "/portal/webhooks/:id", signedIn((s) => Effect.flatMap(idOf, ({ id }) => subscriptionPage(s, id, 200))))

  yield* router.add("POST", "/portal/webhooks/:id", changing((s, form) =>
    Effect.gen(function*() {
      const { id } = yield* idOf
      const values = formValues(form)
      const input = { url: values.url, event_types: values.eventTypes, description: values.description === "" ? null : values.description }
      const decoded = decodeUpdate(input)
      const issues = Result.isFailure(decoded) ? issueDetails(decoded.failure.issue, "body") : []
      const errors = fieldErrors(s.t, s.access, values, issues)
      if (Result.isFailure(decoded) || Object.keys(errors).length > 0) return yield* subscriptionPage(s, id, 400, { values, errors })
      const updated = yield* Effect.result(webhooks.update(s.access.tenant, id, decoded.success))
      if (Result.isFailure(updated)) {
        if (updated.failure._tag === "NotFound") return yield* updated.failure
        return yield* subscriptionPage(s, id, 400, { values, errors: fieldErrors(s.t, s.access, values, updated.failure.details) })
      }
      return redirect(`${portalPaths.webhook(id)}?done=saved`)
    })
  ))

  for (const [action, enabled] of [["enable", true], ["disable", false]] as const) {
    yield* router.add("POST", `/portal/webhooks/:id/${action}`, changing((s) =>
      Effect.gen(function*() {
        const { id } = yield* idOf
        yield* webhooks.update(s.access.tenant, id, { enabled })
        return redirect(`${portalPaths.webhook(id)}?done=${action}d`)
      })
    ))
  }

  yield* router.add("POST", "/portal/webhooks/:id/delete", changing((s, form) =>
    Effect.gen(function*() {
      const { id } = yield* idOf
      if (form.get("confirmed") !== "yes") {
        yield* webhooks.get(s.access.tenant, id)
        return show(s, 200, s.t.confirmTitle, confirmBody(s.view, s.t.deleteConfirm, `${portalPaths.webhook(id)}/delete`, {}, portalPaths.webhook(id)))
      }
      yield* webhooks.remove(s.access.tenant, id)
      return redirect(`${portalPaths.webhooks}?done=deleted`)
    })
  ))

  yield* router.add("POST", "/portal/webhooks/:id/secret", changing((s) =>
    Effect.gen(function*() {
      const { id } = yield* idOf
      const secret = yield* webhooks.revealSecret(s.access.tenant, id)
      return yield* subscriptionPage(s, id, 200, { revealed: { secret } })
    })
  ))

  yield* router.add("POST", "/portal/webhooks/:id/rotate", changing((s, form) =>
    Effect.gen(function*() {
      const { id } = yield* idOf
      const grace = Number(form.get("grace_period_seconds") ?? "86400")
      const input = Schema.decodeUnknownResult(WebhookModel.WebhookSecretRotate)({ grace_period_seconds: grace })
      const rotated = yield* webhooks.rotateSecret(s.access.tenant, id, Result.isSuccess(input) ? input.success : {})
      const until = rotated.previous_secret_expires_at
      return yield* subscriptionPage(s, id, 200, {
        notices: [{ kind: "success", text: until === null ? s.t.rotatedNow : format(s.t.rotated, { until: formatUntil(s.locale, until) }) }],
        revealed: { secret: { signing_scheme: rotated.signing_scheme, secret: rotated.secret, public_key: rotated.public_key } }
      })
    })
  ))

  yield* router.add("POST", "/portal/webhooks/:id/test", changing((s) =>
    Effect.gen(function*() {
      const { id } = yield* idOf
      const sent = yield* webhooks.sendTest(s.access.tenant, id)
      return yield* subscriptionPage(s, id, 200, {
        notices: [{ kind: "success", text: format(s.t.testSent, { event: sent.event_id }) }],
        testPayload: sent.payload
      })
    })
  ))

  const deliveryPage = (s: Signed, id: string, deliveryId: string, notices: ReadonlyArray<Notice>) =>
    Effect.gen(function*() {
      const subscription = yield* webhooks.get(s.access.tenant, id)
      const delivery = yield* webhooks.getDelivery(s.access.tenant, id, deliveryId)
      const attempts = yield* webhooks.listAttempts(s.access.tenant, id, deliveryId, yield* Effect.orDie(Pagination.pageRequest({ perPage: 50 })))
      const done: ReadonlyArray<Notice> = s.query.get("done") === "redelivered" ? [{ kind: "success", text: s.t.redelivered }] : []
      return show(s, 200, format(s.t.deliveryTitle, { type: delivery.event_type }), deliveryBody(s.view, {
        subscription,
        delivery,
        attempts: attempts.items,
        notices: [...done, ...notices]
      }))
    })

  yield* router.add("GET", "/portal/webhooks/:id/deliveries/:deliveryId", signedIn((s) =>
    Effect.flatMap(idOf, ({ deliveryId, id }) => deliveryPage(s, id, deliveryId, []))
  ))

  yield* router.add("POST", "/portal/webhooks/:id/deliveries/:deliveryId/redeliver", changing((s, form) =>
    Effect.gen(function*() {
      const { deliveryId, id } = yield* idOf
      const force = form.get("force") === "true"
      if (force && form.get("confirmed") !== "yes") {
        yield* webhooks.getDelivery(s.access.tenant, id, deliveryId)
        const action = `${portalPaths.delivery(id, deliveryId)}/redeliver`
        return show(s, 200, s.t.confirmTitle, confirmBody(s.view, s.t.forceConfirm, action, { force: "true" }, portalPaths.delivery(id, deliveryId)))
      }
      yield* webhooks.redeliver(s.access.tenant, id, deliveryId, force ? { force: true } : {})
      return redirect(`${portalPaths.delivery(id, deliveryId)}?done=redelivered`)
    })
  ))

  yield* router.add("GET", portalPaths.events, signedIn((s) =>
    Effect.map(offeredTypes(s.access), (types) => show(s, 200, s.t.catalogTitle, catalogBody(s.view, types)))
  ))
}))

/** `?done=` of a page redirected to after a change, and the words it shows. */
const doneMessages = { saved: "saved", enabled: "enabledNow", disabled: "disabledNow" } as const

const formatUntil = (locale: Locale, iso: string) =>
  new Intl.DateTimeFormat(locale === "ro" ? "ro-RO" : "en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(new Date(iso)) + " UTC"
