import type { WebhookEvent } from "@opsplatform/webhooks-verify"

/** Where verified events go. Here: one line on stdout each; in an application, a real queue. */
export const queue = {
  async push(event: WebhookEvent) {
    console.log(`verified ${event.type} ${event.id}`)
  }
}
