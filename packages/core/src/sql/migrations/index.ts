import type { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import foundation from "./0001_foundation.ts"
import deliveryRoutes from "./0002_delivery_routes.ts"
import obligations from "./0003_obligations.ts"
import webhooks from "./0004_webhooks.ts"
import oauth from "./0005_oauth.ts"
import invoices from "./0006_invoices.ts"
import audit from "./0007_audit.ts"
import fleetCourt from "./0008_fleet_court.ts"
import grants from "./0010_grants.ts"
import fiscal from "./0014_fiscal.ts"
import mail from "./0011_mail.ts"
import display from "./0012_display.ts"
import metering from "./0009_metering.ts"
import imports from "./0013_imports.ts"
import listIndexes from "./0015_list_indexes.ts"
import importRowBatches from "./0016_import_row_batches.ts"
import credentialChanges from "./0017_credential_changes.ts"
import webhookSigningSchemes from "./0018_webhook_signing_schemes.ts"
import importErrorFields from "./0019_import_error_fields.ts"
import oauthAppVerification from "./0020_oauth_app_verification.ts"
import webhookPortalSessions from "./0021_webhook_portal_sessions.ts"

/**
 * Every schema change, in order. The migrator applies every id a database has
 * not run yet, in order — also one below the highest applied (0013 arrived
 * after 0014 had shipped; see `pendingOf` in migrate.ts).
 * Reserved while areas are built side by side: 0002 delivery routes (with the
 * fleet cost profile and rate limits), 0003 contract obligations, 0004 events
 * and webhooks, 0005 OAuth apps.
 */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_foundation": foundation,
  "0002_delivery_routes": deliveryRoutes,
  "0003_obligations": obligations,
  "0004_webhooks": webhooks,
  "0005_oauth": oauth,
  "0006_invoices": invoices,
  "0007_audit": audit,
  "0008_fleet_court": fleetCourt,
  "0010_grants": grants,
  "0014_fiscal": fiscal,
  "0011_mail": mail,
  "0012_display": display,
  "0009_metering": metering,
  "0013_imports": imports,
  "0015_list_indexes": listIndexes,
  "0016_import_row_batches": importRowBatches,
  "0017_credential_changes": credentialChanges,
  "0018_webhook_signing_schemes": webhookSigningSchemes,
  "0019_import_error_fields": importErrorFields,
  "0020_oauth_app_verification": oauthAppVerification,
  "0021_webhook_portal_sessions": webhookPortalSessions
}
