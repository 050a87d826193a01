/**
 * Sends a receiver a delivery signed the way the platform signs, without a
 * platform: `OPSPLATFORM_WEBHOOK_SECRET=whsec_… RECEIVER=http://127.0.0.1:3000/webhooks/opsplatform node src/send-test.ts`.
 * Start the receiver with the same secret (`generateSecret()` makes one).
 */
const receiver = process.env.RECEIVER ?? "http://localhost:3000/webhooks/opsplatform"
// #region testing
import { sign } from "@opsplatform/webhooks-verify"

const secret = process.env.OPSPLATFORM_WEBHOOK_SECRET! // generateSecret() makes one: "whsec_" + base64 of 32 random bytes
const payload = JSON.stringify({
  id: "evt_test_1", type: "webhook.test", created: Math.floor(Date.now() / 1000), environment: "sandbox",
  data: { subscription_id: "sub_1", organizationId: "org_1" }
})
const headers = sign(secret, { id: "evt_test_1", payload }) // { "webhook-id", "webhook-timestamp", "webhook-signature" }
const response = await fetch(receiver, { method: "POST", body: payload, headers: { ...headers, "content-type": "application/json" } })
// #endregion testing
console.log(`${receiver} answered ${response.status}`)
