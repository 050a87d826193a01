// The benchmark's Stripe, in its own process: the fake meter event endpoint,
// which tells the parent over IPC when it holds `count` events of customers
// whose id starts with `prefix`.
import { startFakeStripe } from "@opsplatform/testing/fakeStripe"

const fake = await startFakeStripe({ apiKeys: [process.argv[2]!] })
let waiting: { readonly prefix: string; readonly count: number } | undefined
const check = () => {
  if (waiting === undefined) return
  const { count, prefix } = waiting
  if (fake.events.filter((e) => e.customer.startsWith(prefix)).length >= count) {
    waiting = undefined
    process.send!({ at: Date.now() })
  }
}
setInterval(check, 5).unref()
process.on("message", (m: any) => {
  waiting = m
  check()
})
process.send!({ port: fake.port })
