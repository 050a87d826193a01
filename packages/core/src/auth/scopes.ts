/**
 * The scope catalog. Every /v1 operation requires exactly one of these; a
 * credential carries a set of them. The spec names some; the rest fill the
 * areas it leaves open (see docs/decisions.md).
 */
export const scopeCatalog = {
  "contracts:read": "Read contract obligations and contracts",
  "contracts:write": "Create, change, complete and cancel contract obligations and contracts",
  "delivery:read": "Read delivery routes, their cost comparison and the fleet cost profile",
  "delivery:write": "Create, plan, dispatch and change delivery routes and the fleet cost profile",
  "grants:read": "Read accountant access grants",
  "grants:write": "Request, approve and revoke accountant access grants",
  "imports:read": "Read import jobs",
  "imports:write": "Start and revert import jobs",
  "display:read": "Read wall-display data and unlock a display with its PIN",
  "display:assistant": "Ask the wall-display assistant",
  "display:manage": "Register wall displays and set their PINs",
  "locations:read": "Read locations",
  "locations:write": "Create, change and delete locations",
  "expenses:read": "Read expenses",
  "expenses:write": "Create and change expenses",
  "payments:charge": "Report metered usage to the payment processor",
  "invoices:read": "Read invoices, their payments, credit notes and bank transactions",
  "invoices:write": "Create and issue invoices, record payments, reversals and refunds, issue credit notes, import and match bank transactions",
  "contacts:read": "Read contacts",
  "contacts:write": "Create, change and delete contacts",
  "fleet:read": "Read fleet vehicles",
  "fleet:write": "Create, change and delete fleet vehicles",
  "court:read": "Read court cases and their hearings",
  "court:write": "Create, change and delete court cases and their hearings",
  "members:read": "Read the organization's members",
  "organization:read": "Read the organization's settings: name, time zone, escalation delay",
  "organization:write": "Change the organization's settings (with a live credential)",
  "webhooks:read": "Read webhook subscriptions, event types and delivery logs",
  "webhooks:write": "Create, change, rotate, test and redeliver webhook subscriptions",
  "apps:read": "Read the organization's OAuth apps and installations",
  "apps:write": "Register, change and delete OAuth apps and install them",
  "audit:read": "Read the organization's audit log",
  "mail:read": "Read the organization's mailboxes and their sync state",
  "mail:write": "Connect, change and remove mailboxes (their IMAP credentials are never shown)",
  "subscriptions:read": "Read metered subscriptions and their usage records with their forwarding status",
  "subscriptions:write": "Create and change metered subscriptions (pause, resume, cancel)"
} as const

export type Scope = keyof typeof scopeCatalog

export const allScopes: ReadonlyArray<Scope> = Object.keys(scopeCatalog) as Array<Scope>

export const isScope = (s: string): s is Scope => Object.hasOwn(scopeCatalog, s)

/** Scopes a wall-display device token may carry. */
export const displayScopes: ReadonlyArray<Scope> = ["display:read", "display:assistant"]

/**
 * The one rule: a credential may perform an operation when its granted set
 * contains the operation's scope, exactly. No scope implies another, so what a
 * consent screen shows is exactly what a token can do.
 */
export const hasScope = (granted: Iterable<string>, required: Scope): boolean => {
  for (const s of granted) if (s === required) return true
  return false
}

/** Parses a space-separated scope string; unknown names are returned separately. */
export const parseScopes = (input: string): { readonly scopes: ReadonlyArray<Scope>; readonly unknown: ReadonlyArray<string> } => {
  const scopes: Array<Scope> = []
  const unknown: Array<string> = []
  for (const s of input.split(/\s+/)) {
    if (s === "") continue
    if (isScope(s)) {
      if (!scopes.includes(s)) scopes.push(s)
    } else unknown.push(s)
  }
  return { scopes, unknown }
}
