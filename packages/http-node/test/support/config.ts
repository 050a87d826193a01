import type { Layer } from "effect"
import { type CoreConfig, layerTest, type ServerConfig } from "../../src/config/Configuration.ts"

/**
 * The configuration of this test file's servers, cores and spawned processes:
 * variables as an operator sets them, kept here rather than in `process.env`.
 * In-process servers get them as a test configuration layer (the process's
 * environment is not read); spawned CLI processes get them in their
 * environment, as an operator's shell gives them.
 */
const configured: Record<string, string> = {
  // The operator key servers on PostgreSQL need for webhook secrets (a test value, never a real one).
  OPSPLATFORM_SECRET_KEY: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
  // Tests never reach the real tax authority: a server without a fake one is refused on loopback, at once.
  OPSPLATFORM_ANAF_URL: "http://127.0.0.1:9",
  OPSPLATFORM_ANAF_RETRIES: "0",
  // Every test's requests come from 127.0.0.1: the per-network OAuth limit is tested where it is the subject.
  OPSPLATFORM_OAUTH_PER_NETWORK_PER_MIN: "1000000"
}

/** Sets variables for the rest of this test file. */
export const configureTests = (values: Readonly<Record<string, string>>): void => {
  Object.assign(configured, values)
}

/** The variables set so far, over the given ones. */
export const testVariables = (values: Readonly<Record<string, string>> = {}): Record<string, string> => ({
  ...configured,
  ...values
})

/** The test configuration layer of an in-process server or core. */
export const testConfiguration = (values?: Readonly<Record<string, string>>): Layer.Layer<CoreConfig | ServerConfig> =>
  layerTest(testVariables(values))
