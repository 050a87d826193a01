import type { Pagination, PortalSessions, WebhookModel } from "@opsplatform/core"
import { actionForm, csrfInput, described, field } from "../pages/forms.ts"
import { type Html, html, raw } from "../pages/html.ts"
import { format, formatInstant, type Locale } from "../pages/i18n.ts"
import type { PortalMessages } from "./messages.ts"
import { portalPaths } from "./paths.ts"

/**
 * The portal's page bodies. Each takes what the route read through the core
 * services and the words of the reader's language; none decides anything.
 */

export interface View {
  readonly t: PortalMessages
  readonly locale: Locale
  readonly csrf: string
  readonly access: PortalSessions.PortalAccess
}

export type Notice = { readonly kind: "success" | "error" | "info"; readonly text: string | Html }

const notices = (list: ReadonlyArray<Notice>): Html =>
  html`${list.map((n) => html`<div class="notice ${n.kind}" role="${n.kind === "error" ? "alert" : "status"}">${n.text}</div>`)}`

const readOnlyNote = (v: View) => v.access.readOnly ? html`<p class="notice info">${v.t.readOnlyNote}</p>` : ""

const statusOf = (v: View, s: WebhookModel.WebhookSubscription) =>
  s.enabled
    ? html`<span class="status status-enabled">${v.t.enabled}</span>`
    : html`<span class="status status-disabled">${v.t.disabled}</span>`

export const subscriptionsBody = (v: View, list: ReadonlyArray<WebhookModel.WebhookSubscription>, shown: ReadonlyArray<Notice>) =>
  html`<h1>${v.t.endpointsTitle}</h1>${notices(shown)}${readOnlyNote(v)}<p>${v.t.endpointsIntro}</p>
${v.access.readOnly ? "" : html`<p><a class="button primary" href="${portalPaths.newWebhook}">${v.t.addEndpoint}</a></p>`}
${list.length === 0
    ? html`<p>${v.t.noEndpoints}</p>`
    : html`<table><caption class="visually-hidden">${v.t.endpointsTitle}</caption><thead><tr><th scope="col">${v.t.colUrl}</th><th scope="col">${v.t.colDescription}</th><th scope="col">${v.t.colEvents}</th><th scope="col">${v.t.colStatus}</th></tr></thead><tbody>
${list.map((s) => html`<tr><td><a href="${portalPaths.webhook(s.id)}"><code>${s.url}</code></a></td><td>${s.description ?? ""}</td><td>${s.event_types.join(", ")}</td><td>${statusOf(v, s)}</td></tr>`)}
</tbody></table>`}`

export interface FormValues {
  readonly url: string
  readonly description: string
  readonly eventTypes: ReadonlyArray<string>
}

export type FieldErrors = Partial<Record<"url" | "description" | "event_types", string>>

const typePicker = (v: View, offered: ReadonlyArray<WebhookModel.WebhookEventType>, picked: ReadonlyArray<string>, error: string | undefined) =>
  html`<fieldset${described(error === undefined ? "event-types-hint" : "event-types-hint event-types-error", error !== undefined)}><legend>${v.t.eventTypes}</legend>
<p class="hint" id="event-types-hint">${v.t.eventTypesHint} <a href="${portalPaths.events}">${v.t.navCatalog}</a></p>
${error === undefined ? "" : html`<p class="notice error" id="event-types-error">${error}</p>`}
${offered.map((e) => html`<label><input type="checkbox" name="event_types" value="${e.type}"${picked.includes(e.type) ? raw(" checked") : ""}> <span><code>${e.type}</code> — ${e.description}</span></label>`)}
</fieldset>`

const subscriptionFields = (v: View, offered: ReadonlyArray<WebhookModel.WebhookEventType>, values: FormValues, errors: FieldErrors) =>
  html`${field({
    id: "url",
    label: v.t.url,
    hint: v.t.urlHint,
    error: errors.url,
    control: (by, invalid) => html`<input id="url" name="url" type="url" required maxlength="2048" autocomplete="url" value="${values.url}"${described(by, invalid)}>`
  })}${field({
    id: "description",
    label: v.t.description,
    hint: v.t.descriptionHint,
    error: errors.description,
    control: (by, invalid) => html`<input id="description" name="description" type="text" maxlength="500" value="${values.description}"${described(by, invalid)}>`
  })}${typePicker(v, offered, values.eventTypes, errors.event_types)}`

export const newSubscriptionBody = (
  v: View,
  offered: ReadonlyArray<WebhookModel.WebhookEventType>,
  values: FormValues,
  errors: FieldErrors
) =>
  html`<h1>${v.t.newTitle}</h1>${Object.keys(errors).length === 0 ? "" : notices([{ kind: "error", text: v.t.invalid }])}
<form method="post" action="${portalPaths.webhooks}">${csrfInput(v.csrf)}${subscriptionFields(v, offered, values, errors)}
<div class="actions"><button type="submit" class="primary">${v.t.create}</button><a href="${portalPaths.webhooks}">${v.t.cancel}</a></div></form>`

export interface DeliveryLog {
  readonly page: Pagination.Page<WebhookModel.WebhookDelivery>
  readonly filter: { readonly status: string; readonly event_type: string; readonly from: string; readonly to: string }
  /** The address of this log page without its cursor (filters kept), and of the next page. */
  readonly here: string
  readonly next: string | undefined
  readonly isFirst: boolean
}

const deliveryStatus = (v: View, status: WebhookModel.DeliveryStatus) =>
  html`<span class="status status-${status}">${v.t[`status_${status}`]}</span>`

const logSection = (v: View, s: WebhookModel.WebhookSubscription, log: DeliveryLog, types: ReadonlyArray<string>) => {
  const inFlight = log.page.items.some((d) => d.status === "pending" || d.status === "sending")
  return html`<section id="log" aria-labelledby="log-title"${inFlight ? html` data-refresh="${log.here}"` : ""}>
<h2 id="log-title">${v.t.logTitle}</h2><p>${v.t.logIntro}</p>
<form method="get" action="${portalPaths.webhook(s.id)}" class="filters" aria-label="${v.t.logTitle}">
<div><label for="f-status">${v.t.filterStatus}</label><select id="f-status" name="status"><option value="">${v.t.any}</option>${
    (["pending", "sending", "succeeded", "failed", "dead"] as const).map((st) =>
      html`<option value="${st}"${log.filter.status === st ? raw(" selected") : ""}>${v.t[`status_${st}`]}</option>`
    )
  }</select></div>
<div><label for="f-type">${v.t.filterType}</label><select id="f-type" name="event_type"><option value="">${v.t.any}</option>${
    types.map((type) => html`<option value="${type}"${log.filter.event_type === type ? raw(" selected") : ""}>${type}</option>`)
  }</select></div>
<div><label for="f-from">${v.t.filterFrom}</label><input id="f-from" name="from" type="date" value="${log.filter.from}"></div>
<div><label for="f-to">${v.t.filterTo}</label><input id="f-to" name="to" type="date" value="${log.filter.to}"></div>
<div class="actions"><button type="submit">${v.t.applyFilters}</button><a href="${portalPaths.webhook(s.id)}#log">${v.t.clearFilters}</a></div>
</form>
${inFlight ? html`<p class="hint" role="status">${v.t.refreshing}</p>` : ""}
${log.page.items.length === 0
    ? html`<p>${v.t.noDeliveries}</p>`
    : html`<table class="deliveries"><caption class="visually-hidden">${v.t.logTitle}</caption><thead><tr><th scope="col">${v.t.colEvent}</th><th scope="col">${v.t.colStatus}</th><th scope="col">${v.t.colCreated}</th><th scope="col">${v.t.colAttempts}</th><th scope="col">${v.t.colLastCode}</th></tr></thead><tbody>
${log.page.items.map((d) => html`<tr data-delivery="${d.id}"><td><a href="${portalPaths.delivery(s.id, d.id)}"><code>${d.event_type}</code></a><br><span class="hint">${d.event_id}</span></td><td>${deliveryStatus(v, d.status)}</td><td>${formatInstant(v.locale, d.created_at)}</td><td>${d.attempt_count}</td><td>${d.last_status_code ?? (d.last_error === null ? "" : v.t.noAnswer)}</td></tr>`)}
</tbody></table>`}
<p class="actions">${log.isFirst ? "" : html`<a href="${log.here}#log">${v.t.firstPage}</a>`}${log.next === undefined ? "" : html`<a href="${log.next}#log">${v.t.nextPage}</a>`}</p>
</section>`
}

export interface Revealed {
  readonly secret: WebhookModel.WebhookSecret
}

const secretSection = (v: View, s: WebhookModel.WebhookSubscription, revealed: Revealed | undefined) =>
  html`<section aria-labelledby="secret-title"><h2 id="secret-title">${v.t.secretTitle}</h2><p>${v.t.secretIntro}</p>
${revealed === undefined
    ? v.access.readOnly ? "" : actionForm({ action: `${portalPaths.webhook(s.id)}/secret`, csrf: v.csrf, label: v.t.reveal })
    : html`<p><strong>${revealed.secret.secret === null ? v.t.publicKeyShown : v.t.secretShown}</strong></p>
<p><code class="secret" id="secret-value">${revealed.secret.secret ?? revealed.secret.public_key ?? ""}</code> <button type="button" data-copy="secret-value" data-copied="${v.t.copied}" hidden>${v.t.copy}</button></p>`}
${v.access.readOnly ? "" : html`<form method="post" action="${portalPaths.webhook(s.id)}/rotate">${csrfInput(v.csrf)}
<p class="hint" id="rotate-hint">${v.t.rotateHint}</p>
<label for="grace">${v.t.grace}</label><select id="grace" name="grace_period_seconds" aria-describedby="rotate-hint">
<option value="0">${v.t.graceNow}</option><option value="3600">${v.t.grace1h}</option><option value="86400" selected>${v.t.grace24h}</option><option value="604800">${v.t.grace7d}</option></select>
<div class="actions"><button type="submit">${v.t.rotate}</button></div></form>`}
</section>`

export const subscriptionBody = (v: View, input: {
  readonly subscription: WebhookModel.WebhookSubscription
  readonly offered: ReadonlyArray<WebhookModel.WebhookEventType>
  readonly log: DeliveryLog
  readonly notices: ReadonlyArray<Notice>
  readonly revealed?: Revealed | undefined
  readonly testPayload?: unknown
  readonly values?: FormValues | undefined
  readonly errors?: FieldErrors | undefined
}) => {
  const s = input.subscription
  const values = input.values ?? { url: s.url, description: s.description ?? "", eventTypes: s.event_types }
  const errors = input.errors ?? {}
  const disabledWhy = s.enabled ? undefined : s.disabled_reason === "endpoint_gone" ? v.t.disabledGone : v.t.disabledByRequest
  return html`<p><a href="${portalPaths.webhooks}">${v.t.navEndpoints}</a></p>
<h1><code>${s.url}</code></h1>${notices(input.notices)}${readOnlyNote(v)}
<p>${v.t.colStatus}: ${statusOf(v, s)}</p>
${disabledWhy === undefined ? "" : html`<p class="notice error" role="status">${disabledWhy}</p>`}
${v.access.readOnly ? "" : html`<div class="actions">${
    s.enabled
      ? actionForm({ action: `${portalPaths.webhook(s.id)}/disable`, csrf: v.csrf, label: v.t.disable })
      : actionForm({ action: `${portalPaths.webhook(s.id)}/enable`, csrf: v.csrf, label: v.t.enable, kind: "primary" })
  }</div>`}
${input.testPayload === undefined ? "" : html`<section aria-labelledby="test-title"><h2 id="test-title">${v.t.testTitle}</h2><pre tabindex="0">${JSON.stringify(input.testPayload, null, 2)}</pre></section>`}
${v.access.readOnly || !s.enabled ? "" : html`<section aria-labelledby="send-test-title"><h2 id="send-test-title">${v.t.testTitle}</h2><p>${v.t.testIntro}</p>${
    actionForm({ action: `${portalPaths.webhook(s.id)}/test`, csrf: v.csrf, label: v.t.sendTest })
  }</section>`}
${logSection(v, s, input.log, input.offered.map((e) => e.type))}
${secretSection(v, s, input.revealed)}
<section aria-labelledby="details-title"><h2 id="details-title">${v.t.details}</h2>
${v.access.readOnly
    ? html`<dl><dt>${v.t.description}</dt><dd>${s.description ?? ""}</dd><dt>${v.t.eventTypes}</dt><dd>${s.event_types.join(", ")}</dd></dl>`
    : html`${Object.keys(errors).length === 0 ? "" : notices([{ kind: "error", text: v.t.invalid }])}<form method="post" action="${portalPaths.webhook(s.id)}">${csrfInput(v.csrf)}${
      subscriptionFields(v, input.offered, values, errors)
    }<div class="actions"><button type="submit" class="primary">${v.t.save}</button></div></form>
<div class="actions">${actionForm({ action: `${portalPaths.webhook(s.id)}/delete`, csrf: v.csrf, label: v.t.deleteEndpoint, kind: "danger", confirm: v.t.deleteConfirm })}</div>`}
</section>`
}

export const deliveryBody = (v: View, input: {
  readonly subscription: WebhookModel.WebhookSubscription
  readonly delivery: WebhookModel.WebhookDelivery
  readonly attempts: ReadonlyArray<WebhookModel.WebhookAttempt>
  readonly notices: ReadonlyArray<Notice>
}) => {
  const { delivery: d, subscription: s } = input
  const action = `${portalPaths.delivery(s.id, d.id)}/redeliver`
  return html`<p><a href="${portalPaths.webhook(s.id)}#log">${v.t.backToEndpoint}</a></p>
<h1>${format(v.t.deliveryTitle, { type: d.event_type })}</h1>${notices(input.notices)}
<p>${format(v.t.deliveryIntro, { event: d.event_id, created: formatInstant(v.locale, d.created_at) })}</p>
<p>${v.t.colStatus}: ${deliveryStatus(v, d.status)}${d.next_attempt_at === null ? "" : html` — ${format(v.t.nextAttempt, { at: formatInstant(v.locale, d.next_attempt_at) })}`}</p>
${v.access.readOnly || d.status === "sending" ? "" : html`<div class="actions">${
    d.status === "succeeded"
      ? actionForm({ action, csrf: v.csrf, label: v.t.forceRedeliver, hidden: { force: "true" }, confirm: v.t.forceConfirm })
      : actionForm({ action, csrf: v.csrf, label: v.t.redeliver, kind: "primary" })
  }</div>`}
<h2>${v.t.attemptsTitle}</h2>
${input.attempts.length === 0
    ? html`<p>${v.t.noAttempts}</p>`
    : html`<table class="attempts"><caption class="visually-hidden">${v.t.attemptsTitle}</caption><thead><tr><th scope="col">${v.t.colNumber}</th><th scope="col">${v.t.colTime}</th><th scope="col">${v.t.colCode}</th><th scope="col">${v.t.colDuration}</th><th scope="col">${v.t.colResponse}</th></tr></thead><tbody>
${input.attempts.map((a) => html`<tr><td>${a.number}</td><td>${formatInstant(v.locale, a.attempted_at)}</td><td>${a.status_code ?? v.t.noAnswer}</td><td>${format(v.t.durationMs, { ms: a.duration_ms })}</td><td>${a.error === null ? "" : html`<p>${a.error}</p>`}${a.response_body === null || a.response_body === "" ? "" : html`<pre tabindex="0">${a.response_body}</pre>`}</td></tr>`)}
</tbody></table>`}`
}

export const catalogBody = (v: View, types: ReadonlyArray<WebhookModel.WebhookEventType>) =>
  html`<h1>${v.t.catalogTitle}</h1><p>${v.t.catalogIntro}</p>
<nav aria-label="${v.t.catalogTitle}"><ul>${types.map((e) => html`<li><a href="#${e.type}">${e.type}</a></li>`)}</ul></nav>
${types.map((e) => html`<section id="${e.type}" class="event-type" aria-labelledby="h-${e.type}"><h2 id="h-${e.type}"><code>${e.type}</code></h2><p>${e.description}</p>
<details><summary>${v.t.schema}</summary><pre tabindex="0" class="schema">${JSON.stringify(e.schema, null, 2)}</pre></details>
<h3>${v.t.example}</h3><pre tabindex="0" class="example">${JSON.stringify(e.example, null, 2)}</pre></section>`)}`

/** A question the server asks when the page's script did not (an action that cannot be undone). */
export const confirmBody = (v: View, question: string, action: string, hidden: Readonly<Record<string, string>>, back: string) =>
  html`<h1>${v.t.confirmTitle}</h1><p>${question}</p>
<form method="post" action="${action}">${csrfInput(v.csrf)}${
    Object.entries({ ...hidden, confirmed: "yes" }).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)
  }<div class="actions"><button type="submit" class="primary">${v.t.confirm}</button><a href="${back}">${v.t.cancel}</a></div></form>`

export const messageBody = (title: string, text: string) => html`<h1>${title}</h1><p>${text}</p>`
