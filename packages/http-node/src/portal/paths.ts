/** The portal's addresses, in one place for the pages, the routes and the API's link. */
export const portalPaths = {
  root: "/portal",
  enter: "/portal/enter",
  webhooks: "/portal/webhooks",
  newWebhook: "/portal/webhooks/new",
  webhook: (id: string) => `/portal/webhooks/${encodeURIComponent(id)}`,
  delivery: (id: string, deliveryId: string) => `/portal/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}`,
  events: "/portal/events",
  signOut: "/portal/sign-out",
  script: "/portal/assets/portal.js"
} as const

/**
 * The one-time link: the token rides in the query, which the request log
 * never writes (it logs the path only), and the page that reads it answers
 * with a redirect that drops it from the address bar.
 */
export const portalLinkUrl = (base: string, linkToken: string): string =>
  `${base}${portalPaths.enter}?token=${encodeURIComponent(linkToken)}`
