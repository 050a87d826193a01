/**
 * What the receivers do with a verified event. Here: one line on stdout per
 * event; in an application, put it on a queue and answer at once.
 */
// #region use
import type { WebhookEvent } from "@opsplatform/webhooks-verify"

export function handle(event: WebhookEvent) {
  switch (event.type) {
    case "invoice.paid":
      console.log(`verified invoice.paid: invoice ${event.data.invoice_id}, ${event.data.payment.amount} paid`) // typed by event type
      break
    case "delivery_route.dispatched":
      console.log(`verified delivery_route.dispatched: ${event.data.stop_count} stops, driver ${event.data.driver_id}`)
      break
    default:
      console.log(`verified ${event.type} ${event.id}`)
  }
}
// #endregion use
