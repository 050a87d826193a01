import type { HttpServerRequest } from "effect/http"

/**
 * The pages' languages: Romanian and English. A page's messages are one table
 * per language with the same keys (the compiler checks both have every one).
 * The reader's choice comes from `?lang=`, then the language cookie the choice
 * sets, then `Accept-Language`; English otherwise.
 */

export const locales = ["ro", "en"] as const
export type Locale = (typeof locales)[number]

export const LANGUAGE_COOKIE = "opsplatform_lang"

const isLocale = (s: string | null | undefined): s is Locale => s === "ro" || s === "en"

/** The first of `Accept-Language`'s languages (by weight) that the pages speak. */
export const fromAcceptLanguage = (header: string | undefined): Locale | undefined => {
  if (header === undefined) return undefined
  const ranked = header.split(",").slice(0, 20).map((part, index) => {
    const [tag = "", ...params] = part.trim().split(";")
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    const weight = q === undefined ? 1 : Number(q.slice(2))
    return { language: tag.trim().toLowerCase().split("-")[0], weight: Number.isFinite(weight) ? weight : 0, index }
  }).filter((r) => r.weight > 0).sort((a, b) => b.weight - a.weight || a.index - b.index)
  return ranked.map((r) => r.language).find(isLocale)
}

/** The request's language, and whether it was chosen just now (so the caller remembers it in the cookie). */
export const negotiateLocale = (request: HttpServerRequest.HttpServerRequest): { readonly locale: Locale; readonly chosen: boolean } => {
  const asked = new URL(request.url, "http://page.invalid").searchParams.get("lang")
  if (isLocale(asked)) return { locale: asked, chosen: true }
  const remembered = request.cookies[LANGUAGE_COOKIE]
  if (isLocale(remembered)) return { locale: remembered, chosen: false }
  return { locale: fromAcceptLanguage(request.headers["accept-language"]) ?? "en", chosen: false }
}

/** A page's messages: the English table gives the keys, the Romanian one must have each. */
export const defineMessages = <const M extends Record<string, string>>(tables: { readonly en: M; readonly ro: { readonly [K in keyof M]: string } }) =>
  (locale: Locale): { readonly [K in keyof M]: string } => tables[locale]

/** `{name}` placeholders filled from `values`. */
export const format = (template: string, values: Readonly<Record<string, string | number>>): string =>
  template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole))

/** Dates and times as the reader's language writes them, in UTC (the API's instants are UTC). */
export const formatInstant = (locale: Locale, iso: string): string =>
  new Intl.DateTimeFormat(locale === "ro" ? "ro-RO" : "en-GB", {
    dateStyle: "medium",
    timeStyle: "medium",
    timeZone: "UTC"
  }).format(new Date(iso)) + " UTC"
