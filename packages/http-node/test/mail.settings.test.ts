import { describe, expect, it } from "vitest"
import { MailSettings } from "@opsplatform/core"
import { coreSettingsFrom } from "../src/config/Configuration.ts"

const mailSettingsFrom = (env: Record<string, string>) => coreSettingsFrom(env).mail.settings

describe("mail settings from the environment", () => {
  it("defaults to a 60 s interval, a 10 min lease and public hosts only", () => {
    expect(mailSettingsFrom({})).toEqual(MailSettings.defaultMailSettings)
    expect(MailSettings.defaultMailSettings).toMatchObject({ intervalSec: 60, leaseMs: 600_000, allowPrivateHosts: false })
  })

  it("reads the interval, the lease and the private-host switch, and refuses what it cannot use", () => {
    expect(mailSettingsFrom({
      OPSPLATFORM_MAIL_INTERVAL_SEC: "5",
      OPSPLATFORM_MAIL_LEASE_SEC: "30",
      OPSPLATFORM_MAIL_ALLOW_PRIVATE: "true"
    })).toMatchObject({ intervalSec: 5, leaseMs: 30_000, allowPrivateHosts: true })
    for (const value of ["0", "1.5", "86401", "soon"]) {
      expect(() => mailSettingsFrom({ OPSPLATFORM_MAIL_INTERVAL_SEC: value }), value).toThrow(
        `OPSPLATFORM_MAIL_INTERVAL_SEC must be a whole number of seconds from 1 to 86400, got '${value}'`
      )
    }
    expect(() => mailSettingsFrom({ OPSPLATFORM_MAIL_ALLOW_PRIVATE: "yes" })).toThrow(
      "OPSPLATFORM_MAIL_ALLOW_PRIVATE must be true or false, got 'yes'"
    )
  })
})
