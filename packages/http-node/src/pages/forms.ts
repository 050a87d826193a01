import { createHash, timingSafeEqual } from "node:crypto"
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { type Html, html } from "./html.ts"

/**
 * Forms of the pages. Every form that changes something carries a CSRF token
 * derived from the browser's session cookie, which a page of another site
 * cannot read: under `Referrer-Policy: no-referrer` a same-origin post may
 * arrive with `Origin: null`, so the token, not the origin, proves the form
 * is ours.
 */

export const CSRF_FIELD = "csrf"

/** The token of a session: SHA-256 of a purpose label and the session's cookie, base64url. */
export const csrfToken = (purpose: string, sessionCookie: string): string =>
  createHash("sha256").update(`${purpose}\0${sessionCookie}`).digest("base64url")

/** Whether a posted token is the session's, compared in constant time. */
export const csrfMatches = (purpose: string, sessionCookie: string, posted: string | null | undefined): boolean => {
  if (posted === null || posted === undefined) return false
  const expected = Buffer.from(csrfToken(purpose, sessionCookie))
  const given = Buffer.from(posted)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

export const csrfInput = (token: string): Html => html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`

/** A form's fields, several values per name kept (checkboxes); anything but a URL-encoded body reads as no fields. */
export const readFormFields: Effect.Effect<URLSearchParams, never, HttpServerRequest.HttpServerRequest> = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (type !== "application/x-www-form-urlencoded") return new URLSearchParams()
  const body = yield* Effect.orElseSucceed(request.text, () => "")
  return new URLSearchParams(body)
})

/** A button that posts a small form (an action on a resource), with the CSRF token and any hidden fields. */
export const actionForm = (options: {
  readonly action: string
  readonly csrf: string
  readonly label: string
  readonly kind?: "primary" | "danger" | undefined
  readonly hidden?: Readonly<Record<string, string>> | undefined
  /** Shown by the page's script before posting; without the script the server asks on a page of its own. */
  readonly confirm?: string | undefined
}): Html =>
  html`<form method="post" action="${options.action}" class="inline"${
    options.confirm === undefined ? "" : html` data-confirm="${options.confirm}"`
  }>${csrfInput(options.csrf)}${
    Object.entries(options.hidden ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)
  }<button type="submit"${options.kind === undefined ? "" : html` class="${options.kind}"`}>${options.label}</button></form>`

/** A labelled control with its hint and error, tied together for assistive technology. */
export const field = (options: {
  readonly id: string
  readonly label: string
  readonly control: (describedBy: string | undefined, invalid: boolean) => Html
  readonly hint?: string | undefined
  readonly error?: string | undefined
}): Html => {
  const ids = [options.hint === undefined ? undefined : `${options.id}-hint`, options.error === undefined ? undefined : `${options.id}-error`]
    .filter((x): x is string => x !== undefined)
  return html`<label for="${options.id}">${options.label}</label>${
    options.hint === undefined ? "" : html`<p class="hint" id="${options.id}-hint">${options.hint}</p>`
  }${options.error === undefined ? "" : html`<p class="notice error" id="${options.id}-error">${options.error}</p>`}${
    options.control(ids.length === 0 ? undefined : ids.join(" "), options.error !== undefined)
  }`
}

/** `aria-describedby` and `aria-invalid` for a control built by `field`. */
export const described = (describedBy: string | undefined, invalid: boolean): Html =>
  html`${describedBy === undefined ? "" : html` aria-describedby="${describedBy}"`}${invalid ? html` aria-invalid="true"` : ""}`
