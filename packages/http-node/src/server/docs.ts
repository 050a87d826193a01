import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiSwagger, OpenApi } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { escape, prose as kitProse } from "../pages/html.ts"

/**
 * The API reference at `/docs`: one HTML page rendered on the server from the
 * OpenAPI document, every operation open with its method, path, scope,
 * parameters, body and every response it declares. It needs no script, so it
 * shows at once however many operations there are; Swagger UI, which renders
 * an operation only when it is opened, stays at `/docs/swagger` for trying
 * requests. See docs/decisions.md, "Client, examples and packaging".
 */

type Json = { readonly [key: string]: unknown }

/** The document's descriptions use backticks for code; nothing else of Markdown (the page kit's `prose`). */
const prose = (text: string) => kitProse(text).text

const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1)

/** A schema in a few words: `string`, `integer`, `Location`, `array of Location`, `"a" | "b"`. */
const typeOf = (schema: Json | undefined): string => {
  if (schema === undefined) return ""
  if (typeof schema.$ref === "string") return refName(schema.$ref)
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ")
  for (const key of ["anyOf", "oneOf"] as const) {
    if (Array.isArray(schema[key])) return (schema[key] as Array<Json>).map(typeOf).join(" | ")
  }
  if (schema.type === "array") return `array of ${typeOf(schema.items as Json | undefined)}`
  return typeof schema.type === "string" ? schema.type : "object"
}

const methodOrder = ["get", "post", "put", "patch", "delete"]

const operationHtml = (path: string, method: string, op: Json): string => {
  const id = String(op.operationId)
  const scope = String(op["x-required-scope"] ?? "")
  const parameters = (op.parameters as Array<Json> | undefined) ?? []
  const body = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.["application/json"] as Json | undefined
  const responses = Object.entries(op.responses as Record<string, Json>)
  const description = typeof op.description === "string" ? op.description.replace(/(?<!\n)\n*Requires the scope `[^`]+`\.$/, "") : ""
  return `<section class="operation" id="${escape(id)}" data-method="${method}" data-path="${escape(path)}">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code class="path">${escape(path)}</code></h3>
${description === "" ? "" : `<p>${prose(description)}</p>`}
<p class="scope">Scope: <code>${escape(scope)}</code></p>
${parameters.length === 0 ? "" : `<table class="parameters"><caption>Parameters</caption><thead><tr><th>name</th><th>in</th><th>type</th><th>description</th></tr></thead><tbody>
${parameters.map((p) => `<tr><td><code>${escape(String(p.name))}</code>${p.required ? " (required)" : ""}</td><td>${escape(String(p.in))}</td><td>${escape(typeOf(p.schema as Json))}</td><td>${prose(String((p.schema as Json | undefined)?.description ?? p.description ?? ""))}</td></tr>`).join("\n")}
</tbody></table>`}
${body === undefined ? "" : `<p class="body">JSON body: <code>${escape(typeOf(body.schema as Json))}</code></p>`}
<table class="responses"><caption>Responses</caption><thead><tr><th>status</th><th>description</th><th>body</th></tr></thead><tbody>
${responses.map(([status, r]) => `<tr class="response${Number(status) >= 400 ? " error" : ""}" data-status="${escape(status)}"><td>${escape(status)}</td><td>${prose(String(r.description ?? ""))}</td><td><code>${escape(typeOf(((r.content as Json | undefined)?.["application/json"] as Json | undefined)?.schema as Json | undefined))}</code></td></tr>`).join("\n")}
</tbody></table>
</section>`
}

/** The page for a document. */
export const docsHtml = (spec: OpenApi.OpenAPISpec): string => {
  const byTag = new Map<string, Array<string>>()
  for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, Json>>)) {
    for (const method of methodOrder) {
      const op = item[method]
      if (op === undefined) continue
      const tag = ((op.tags as Array<string> | undefined) ?? ["Other"])[0]!
      byTag.set(tag, [...(byTag.get(tag) ?? []), operationHtml(path, method, op)])
    }
  }
  const tags = new Map(((spec.tags ?? []) as Array<{ name: string; description?: string }>).map((t) => [t.name, t.description ?? ""]))
  const anchor = (tag: string) => `tag-${tag.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(spec.info.title)} reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}
header{padding:1.5rem 2rem;background:#10243e;color:#fff}header a{color:#9fd3ff}
main{display:grid;grid-template-columns:15rem 1fr;gap:2rem;padding:0 2rem 3rem}
nav{position:sticky;top:0;align-self:start;max-height:100vh;overflow:auto;padding-top:1rem}nav a{display:block;color:#10243e;text-decoration:none;padding:.15rem 0}
h2{border-bottom:2px solid #e3e8ee;padding-bottom:.3rem;margin-top:2.5rem}
.operation{border:1px solid #e3e8ee;border-radius:6px;padding:0 1rem 1rem;margin:1rem 0}
.method{display:inline-block;min-width:4.2rem;text-align:center;border-radius:4px;color:#fff;font-size:.8rem;padding:.1rem .4rem;margin-right:.4rem}
.get{background:#1f6feb}.post{background:#1a7f37}.put{background:#9a6700}.patch{background:#8250df}.delete{background:#cf222e}
code{font:13px ui-monospace,monospace;background:#f3f5f7;padding:.05rem .25rem;border-radius:3px}
.scope code{background:#fff4d6}
header code{background:#24405f;color:#fff}
table{border-collapse:collapse;width:100%;margin:.5rem 0}caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border-top:1px solid #e3e8ee;padding:.3rem .5rem;text-align:left;vertical-align:top}
tr.error td:first-child{color:#cf222e;font-weight:600}
</style></head>
<body>
<header><h1>${escape(spec.info.title)} <small>${escape(spec.info.version)}</small></h1>
<p>${prose(spec.info.description ?? "")}</p>
<p>The OpenAPI document: <a href="/v1/openapi.json">/v1/openapi.json</a> · try requests in <a href="/docs/swagger">Swagger UI</a></p></header>
<main><nav>${[...byTag.keys()].map((tag) => `<a href="#${anchor(tag)}">${escape(tag)}</a>`).join("")}</nav>
<div>${[...byTag].map(([tag, ops]) => `<h2 id="${anchor(tag)}">${escape(tag)}</h2>${tags.get(tag) ? `<p>${prose(tags.get(tag)!)}</p>` : ""}\n${ops.join("\n")}`).join("\n")}</div>
</main></body></html>`
}

/** `/docs` (the reference) and `/docs/swagger` (Swagger UI). */
export const DocsRoutes = Layer.mergeAll(
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const page = docsHtml(OpenApi.fromApi(Api))
    yield* router.add("GET", "/docs", Effect.sync(() => HttpServerResponse.html(page)))
  })),
  HttpApiSwagger.layer(Api, { path: "/docs/swagger" })
)
