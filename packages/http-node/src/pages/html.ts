/**
 * HTML built from templates whose interpolations are escaped unless they are
 * already HTML: a page cannot forget to escape a value, and a fragment is
 * never escaped twice.
 */

/** Markup that is already safe to place in a page. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

/** Text as HTML: safe in element content and in quoted attribute values. */
export const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c]!)

/** A value in a template: HTML as it is, lists joined, nothing for null, undefined or false, anything else escaped. */
export type Interpolation = Html | string | number | null | undefined | false | ReadonlyArray<Interpolation>

const render = (value: Interpolation): string =>
  value instanceof Html
    ? value.text
    : Array.isArray(value)
    ? value.map(render).join("")
    : value === null || value === undefined || value === false
    ? ""
    : escape(String(value))

/** The template tag: `html\`<p>${name}</p>\`` escapes `name`. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolation>): Html => {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return new Html(out)
}

/** Markup the caller vouches for (a generated table, a constant). */
export const raw = (text: string): Html => new Html(text)

/** Text with `code` in backticks shown as code, paragraphs split on blank lines; nothing else of Markdown. */
export const prose = (text: string): Html =>
  raw(escape(text).replace(/`([^`]+)`/g, "<code>$1</code>").replace(/\n\n/g, "</p><p>"))
