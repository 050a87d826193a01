import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { FiscalMonitor, MailSync, ObligationMonitor, PulseRollups, UsageForwarder } from "@opsplatform/core"
import { MailSyncLive } from "../server/jobs/mail.ts"
import { UsageForwarderLive } from "../server/metering.ts"
import { printJson, withCore } from "./shared.ts"

const runObligations = Command.make("obligations", {
  org: Flag.String("org").pipe(Flag.withDescription("Only this organization (default: every one)"), Flag.optional)
}, ({ org }) =>
  withCore(Effect.gen(function*() {
    const monitor = yield* ObligationMonitor.ObligationMonitor
    yield* printJson(yield* monitor.run({ organizationId: Option.getOrUndefined(org) }))
  }))).pipe(
    Command.withDescription("One pass of the obligation monitor: send due reminders, overdue notices and escalations; prints what it sent")
  )

const runFiscalStatus = Command.make("fiscal-status", {
  org: Flag.String("org").pipe(Flag.withDescription("Only this organization (default: every one)"), Flag.optional)
}, ({ org }) =>
  withCore(Effect.gen(function*() {
    const monitor = yield* FiscalMonitor.FiscalMonitor
    yield* printJson(yield* monitor.run({ organizationId: Option.getOrUndefined(org) }))
  }))).pipe(
    Command.withDescription(
      "One fiscal status check of every customer with open issued invoices not yet checked today, at the tax authority; prints what it found and sent"
    )
  )

const runMail = Command.make("mail", {
  mailbox: Flag.String("mailbox").pipe(Flag.withDescription("Only this mailbox (default: every enabled one)"), Flag.optional)
}, ({ mailbox }) =>
  withCore(Effect.gen(function*() {
    const sync = yield* MailSync.MailSync
    yield* printJson(yield* sync.run({ mailboxId: Option.getOrUndefined(mailbox), ignoreSchedule: true }))
  }).pipe(Effect.provide(MailSyncLive)))).pipe(
    Command.withDescription(
      "One sync of every enabled mailbox (or the one given), due or not, skipping any another process is syncing; prints what it stored and announced"
    )
  )

const runPulse = Command.make("pulse", {}, () =>
  withCore(Effect.gen(function*() {
    yield* printJson(yield* (yield* PulseRollups.PulseRollups).compact)
  }))).pipe(
    Command.withDescription("One pass of the pulse job: fold the money figures' deltas into their days; prints how many it folded")
  )

const runUsage = Command.make("usage", {}, () =>
  withCore(Effect.gen(function*() {
    const forwarder = yield* UsageForwarder.UsageForwarder
    yield* printJson(yield* forwarder.drain)
  }).pipe(Effect.provide(UsageForwarderLive)))).pipe(
    Command.withDescription(
      "Forward every usage record due now to the payment processor; prints the calls made and where their records went"
    )
  )

export const jobs = Command.make("jobs").pipe(
  Command.withDescription("Run a background job once, outside the server"),
  Command.withSubcommands([Command.make("run").pipe(
    Command.withDescription("Run one background job now, outside the server"),
    Command.withSubcommands([runObligations, runFiscalStatus, runMail, runPulse, runUsage])
  )])
)
