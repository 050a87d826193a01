import { HttpServerResponse } from "effect/http"
import type { OAuthModel, TenancyModel } from "@opsplatform/core"
import { Scopes } from "@opsplatform/core"

import { newNonce, pageHeaders } from "../pages/csp.ts"
import { escape } from "../pages/html.ts"

/**
 * The consent flow's HTML: sign-in, consent and error pages. No script at all;
 * one style block admitted by the response's nonce (the page kit's policy,
 * pages/csp.ts). Every page refuses framing, is never cached and sends no
 * Referer (the request handle is in its address).
 */

const css = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2430}
main{max-width:28rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:1.3rem;margin-top:0}
label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input[type=email],input[type=password],select{width:100%;box-sizing:border-box;padding:.5rem;font:inherit}
fieldset{border:0;padding:0;margin:1rem 0}
legend{font-weight:600}
.choice{display:inline-block;margin-right:1.5rem;font-weight:400}
ul.scopes{padding-left:1.2rem}
ul.scopes code{font-weight:600}
.error{background:#fde8e8;color:#8a1c1c;padding:.6rem .8rem;border-radius:4px}
.actions{display:flex;gap:.8rem;margin-top:1.5rem}
button{font:inherit;padding:.55rem 1.2rem;border-radius:4px;border:1px solid #1d4ed8;cursor:pointer}
button.primary{background:#1d4ed8;color:#fff}
button.secondary{background:#fff;color:#1d4ed8}
.muted{color:#5b6475;font-size:.9rem}
`
const page = (title: string, body: string, nonce: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
  `<title>${escape(title)}</title><style nonce="${nonce}">${css}</style></head><body><main>${body}</main></body></html>`

/** A page with the kit's headers; `formTargets` are the origins a form on it may end up at. */
export const htmlPage = (status: number, title: string, body: string, formTargets: ReadonlyArray<string> = []) => {
  const nonce = newNonce()
  return HttpServerResponse.text(page(title, body, nonce), {
    status,
    contentType: "text/html; charset=utf-8",
    headers: pageHeaders({ nonce, formTargets, scriptless: true })
  })
}

/** The authorize request cannot go back to the app (unknown client or redirect URI): say so here, never redirect. */
export const errorPage = (status: number, message: string) =>
  htmlPage(
    status,
    "Authorization failed",
    `<h1>This authorization cannot continue</h1><p class="error" role="alert">${escape(message)}</p>` +
      `<p class="muted">Return to the app you came from and start again. If it keeps happening, tell the app's developer.</p>`
  )

const hidden = (handle: string, csrf: string) =>
  `<input type="hidden" name="request" value="${escape(handle)}"><input type="hidden" name="csrf" value="${escape(csrf)}">`

const origin = (uri: string) => {
  try {
    return new URL(uri).origin
  } catch {
    return undefined
  }
}

export const signInPage = (input: {
  readonly status: number
  readonly app: OAuthModel.StoredApp
  readonly handle: string
  readonly csrf: string
  readonly redirectUri: string
  readonly error?: string | undefined
  readonly email?: string | undefined
}) =>
  htmlPage(
    input.status,
    `Sign in · ${input.app.name}`,
    `<h1>Sign in to continue to ${escape(input.app.name)}</h1>` +
      (input.error ? `<p class="error" role="alert">${escape(input.error)}</p>` : "") +
      `<form method="post" action="/api/oauth/sign-in">${hidden(input.handle, input.csrf)}` +
      `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${
        escape(input.email ?? "")
      }">` +
      `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>` +
      `<div class="actions"><button class="primary" type="submit">Sign in</button></div></form>` +
      `<form method="post" action="/api/oauth/consent">${hidden(input.handle, input.csrf)}` +
      `<div class="actions"><button class="secondary" type="submit" name="decision" value="deny">Cancel and return to the app</button></div></form>`,
    [origin(input.redirectUri)].filter((o): o is string => o !== undefined)
  )

export const consentPage = (input: {
  readonly status: number
  readonly app: OAuthModel.StoredApp
  readonly handle: string
  readonly csrf: string
  readonly user: TenancyModel.User
  readonly organizations: ReadonlyArray<TenancyModel.Organization>
  readonly scopes: ReadonlyArray<string>
  readonly redirectUri: string
  readonly error?: string | undefined
}) => {
  const scopeItems = input.scopes.map((s) =>
    `<li><code>${escape(s)}</code> — ${escape(Scopes.isScope(s) ? Scopes.scopeCatalog[s] : s)}</li>`
  ).join("")
  const orgChoice = input.organizations.length === 0
    ? `<p class="error" role="alert">You are not a member of any organization, so there is nothing to grant.</p>`
    : `<label for="organization_id">Organization</label><select id="organization_id" name="organization_id" required>${
      input.organizations.map((o) => `<option value="${escape(o.id)}">${escape(o.name)}</option>`).join("")
    }</select>` +
      `<fieldset><legend>Environment</legend>` +
      `<label class="choice"><input type="radio" name="environment" value="live" checked> Live</label>` +
      `<label class="choice"><input type="radio" name="environment" value="sandbox"> Sandbox</label></fieldset>`
  return htmlPage(
    input.status,
    `Authorize ${input.app.name}`,
    `<h1>${escape(input.app.name)} wants access</h1>` +
      `<p class="muted">Signed in as ${escape(input.user.email)}.</p>` +
      (input.error ? `<p class="error" role="alert">${escape(input.error)}</p>` : "") +
      `<form method="post" action="/api/oauth/consent">${hidden(input.handle, input.csrf)}${orgChoice}` +
      `<p>It asks to:</p><ul class="scopes">${scopeItems}</ul>` +
      `<p class="muted">Approving or denying sends you back to ${escape(input.redirectUri)}.</p>` +
      `<div class="actions">` +
      (input.organizations.length === 0
        ? ""
        : `<button class="primary" type="submit" name="decision" value="approve">Approve</button>`) +
      `<button class="secondary" type="submit" name="decision" value="deny">Deny</button></div></form>`,
    [origin(input.redirectUri)].filter((o): o is string => o !== undefined)
  )
}
