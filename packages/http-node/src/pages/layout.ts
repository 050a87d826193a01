import { HttpServerResponse } from "effect/http"
import { type PolicyOptions, pageHeaders } from "./csp.ts"
import { type Html, html, raw } from "./html.ts"
import type { Locale } from "./i18n.ts"

/**
 * The shared frame of every page: the document, its language, a skip link,
 * the header with the page's navigation and language switch, and the one
 * stylesheet, themed through CSS variables. Styles and scripts carry the
 * response's nonce (see csp.ts).
 */

/** How a page looks: an accent colour, a font list, light, dark or the reader's setting. Values are checked by their schema. */
export interface Theme {
  readonly accent_color?: string | undefined
  readonly font_family?: string | undefined
  readonly color_scheme?: "light" | "dark" | "auto" | undefined
}

const baseCss = `
:root{--accent:#0b5cad;--on-accent:#fff;--font:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
--bg:#fff;--fg:#1b1f24;--muted:#57606a;--surface:#f6f8fa;--border:#d0d7de;--danger:#b42318;--ok:#1a7f37;--warn:#8a5a00;color-scheme:light}
html[data-scheme=dark]{--bg:#0f1419;--fg:#e6edf3;--muted:#9aa7b4;--surface:#161d26;--border:#30363d;--danger:#ff8a80;--ok:#56d364;--warn:#e3b341;color-scheme:dark}
@media (prefers-color-scheme:dark){html[data-scheme=auto]{--bg:#0f1419;--fg:#e6edf3;--muted:#9aa7b4;--surface:#161d26;--border:#30363d;--danger:#ff8a80;--ok:#56d364;--warn:#e3b341;color-scheme:dark}}
html[data-scheme=dark],html[data-scheme=auto]{--link:var(--accent)}
body{font:16px/1.5 var(--font);margin:0;background:var(--bg);color:var(--fg)}
a{color:var(--link,var(--accent))}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:var(--bg);padding:.5rem}.skip:focus{left:.5rem}
header.site{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between;padding:.8rem 1.5rem;border-bottom:1px solid var(--border);background:var(--surface)}
header.site .brand{font-weight:700;margin:0;font-size:1.1rem}
header.site nav ul{display:flex;gap:1rem;list-style:none;margin:0;padding:0;flex-wrap:wrap}
header.site nav a[aria-current=page]{font-weight:700}
.tools{display:flex;gap:.8rem;align-items:center;flex-wrap:wrap}
main{max-width:64rem;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid var(--border);padding-bottom:.3rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border-top:1px solid var(--border);padding:.4rem .5rem;text-align:left;vertical-align:top}
code,pre{font:14px ui-monospace,SFMono-Regular,Menlo,monospace}
code{background:var(--surface);padding:.05rem .25rem;border-radius:3px;overflow-wrap:anywhere}
pre{background:var(--surface);border:1px solid var(--border);padding:.8rem;overflow:auto;max-height:28rem;border-radius:4px}
label{display:block;font-weight:600;margin:.8rem 0 .2rem}
fieldset{border:1px solid var(--border);border-radius:4px;margin:.8rem 0;padding:.5rem .8rem}
legend{font-weight:600;padding:0 .3rem}
fieldset label{font-weight:400;display:flex;gap:.4rem;align-items:baseline;margin:.25rem 0}
input[type=url],input[type=text],input[type=date],input[type=datetime-local],select,textarea{font:inherit;padding:.45rem;width:100%;max-width:36rem;box-sizing:border-box;border:1px solid var(--muted);border-radius:4px;background:var(--bg);color:var(--fg)}
.hint{color:var(--muted);font-size:.9rem;margin:.2rem 0}
button,.button{font:inherit;padding:.45rem 1rem;border-radius:4px;border:1px solid var(--accent);cursor:pointer;background:var(--bg);color:var(--fg);text-decoration:none;display:inline-block}
button.primary,.button.primary{background:var(--accent);color:var(--on-accent)}
button.danger{border-color:var(--danger);color:var(--danger)}
.actions{display:flex;gap:.6rem;flex-wrap:wrap;align-items:center;margin:.8rem 0}
.inline{display:inline}
.notice{border-left:4px solid var(--accent);background:var(--surface);padding:.6rem .9rem;margin:1rem 0}
.notice.error{border-color:var(--danger)}.notice.success{border-color:var(--ok)}
.status{font-weight:600}.status-succeeded,.status-enabled{color:var(--ok)}.status-failed,.status-dead,.status-disabled{color:var(--danger)}.status-pending,.status-sending{color:var(--warn)}
.filters{display:flex;flex-wrap:wrap;gap:.8rem;align-items:end}.filters label{margin:0}
.secret{font-size:1rem;user-select:all}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
`

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
const textOn = (hex: string): string => {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? "#000" : "#fff"
}

/** The theme as CSS variables; values reach here only through their schemas' patterns (colour, font names). */
const themeCss = (theme: Theme | undefined): string => {
  const rules: Array<string> = []
  if (theme?.accent_color !== undefined) rules.push(`--accent:${theme.accent_color}`, `--on-accent:${textOn(theme.accent_color)}`)
  if (theme?.font_family !== undefined) rules.push(`--font:${theme.font_family}`)
  return rules.length === 0 ? "" : `:root{${rules.join(";")}}`
}

export interface NavItem {
  readonly href: string
  readonly label: string
  readonly current: boolean
}

export interface LayoutOptions {
  readonly locale: Locale
  readonly title: string
  /** The site's name in the header. */
  readonly brand: string
  readonly nonce: string
  readonly body: Html
  readonly nav?: ReadonlyArray<NavItem> | undefined
  /** Controls at the header's end (language switch, sign out). */
  readonly tools?: Html | undefined
  readonly theme?: Theme | undefined
  /** Scripts the page loads (same-origin paths), each with the nonce. */
  readonly scripts?: ReadonlyArray<string> | undefined
  /** Extra CSS of the page. */
  readonly css?: string | undefined
  readonly skipLabel: string
  readonly navLabel?: string | undefined
}

export const layout = (o: LayoutOptions): Html =>
  html`<!doctype html>
<html lang="${o.locale}" data-scheme="${o.theme?.color_scheme ?? "auto"}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title}</title>
<style nonce="${o.nonce}">${raw(baseCss + themeCss(o.theme) + (o.css ?? ""))}</style>
${(o.scripts ?? []).map((src) => html`<script type="module" src="${src}" nonce="${o.nonce}"></script>`)}
</head><body>
<a class="skip" href="#main">${o.skipLabel}</a>
<header class="site"><p class="brand">${o.brand}</p>
${o.nav === undefined ? "" : html`<nav aria-label="${o.navLabel ?? o.brand}"><ul>${
    o.nav.map((item) => html`<li><a href="${item.href}"${item.current ? raw(` aria-current="page"`) : ""}>${item.label}</a></li>`)
  }</ul></nav>`}
<div class="tools">${o.tools ?? ""}</div></header>
<main id="main" tabindex="-1">${o.body}</main>
</body></html>`

/** A language switch: links to the same page in each other language. */
export const languageSwitch = (current: Locale, path: string, labels: { readonly ro: string; readonly en: string; readonly label: string }): Html => {
  const other: Locale = current === "ro" ? "en" : "ro"
  const url = new URL(path, "http://page.invalid")
  url.searchParams.set("lang", other)
  return html`<a href="${url.pathname + url.search}" lang="${other}" hreflang="${other}" aria-label="${labels.label}">${labels[other]}</a>`
}

/** A page answered with the kit's headers (policy with the same nonce as the page). */
export const pageResponse = (status: number, page: Html, policy: PolicyOptions, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(page.text, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { ...pageHeaders(policy), ...headers }
  })
