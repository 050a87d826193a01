import { Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { Audit } from "./audit/Audit.ts"
import { AuditRepo } from "./audit/AuditRepo.ts"
import { CredentialRepo } from "./auth/CredentialRepo.ts"
import { Credentials } from "./auth/Credentials.ts"
import { ContactRepo } from "./contacts/ContactRepo.ts"
import { Contacts } from "./contacts/Contacts.ts"
import { ContractRepo } from "./contracts/ContractRepo.ts"
import { Contracts } from "./contracts/Contracts.ts"
import { DeviceRepo } from "./display/DeviceRepo.ts"
import { Devices } from "./display/Devices.ts"
import { Display } from "./display/Display.ts"
import { Pulse } from "./display/Pulse.ts"
import { PulseRepo } from "./display/PulseRepo.ts"
import { PulseRollups } from "./display/PulseRollups.ts"
import { Outbox } from "./events/Outbox.ts"
import { CourtRepo } from "./court/CourtRepo.ts"
import { Court } from "./court/Court.ts"
import { FleetRepo } from "./fleet/FleetRepo.ts"
import { Fleet } from "./fleet/Fleet.ts"
import { GrantRepo } from "./grants/GrantRepo.ts"
import { Grants } from "./grants/Grants.ts"
import { Fiscal } from "./fiscal/Fiscal.ts"
import { FiscalRepo } from "./fiscal/FiscalRepo.ts"
import { FiscalMonitor } from "./fiscal/Monitor.ts"
import { IdempotencyRepo } from "./idempotency/IdempotencyRepo.ts"
import { ExpenseRepo } from "./expenses/ExpenseRepo.ts"
import { Expenses } from "./expenses/Expenses.ts"
import { BankTransactions } from "./invoices/BankTransactions.ts"
import { CreditNotes } from "./invoices/CreditNotes.ts"
import { InvoiceRepo } from "./invoices/InvoiceRepo.ts"
import { Invoices } from "./invoices/Invoices.ts"
import { PaymentRepo } from "./invoices/PaymentRepo.ts"
import { LocationRepo } from "./locations/LocationRepo.ts"
import { MailboxRepo } from "./mail/MailboxRepo.ts"
import { Mailboxes } from "./mail/Mailboxes.ts"
import { Locations } from "./locations/Locations.ts"
import { ForwardingRepo } from "./metering/ForwardingRepo.ts"
import { ForwardingSignal } from "./metering/ForwardingSignal.ts"
import { SubscriptionRepo } from "./metering/SubscriptionRepo.ts"
import { Subscriptions } from "./metering/Subscriptions.ts"
import { Usage } from "./metering/Usage.ts"
import { UsageRepo } from "./metering/UsageRepo.ts"
import { ObligationMonitor } from "./obligations/Monitor.ts"
import { Notifier } from "./obligations/Notifier.ts"
import { ObligationRepo } from "./obligations/ObligationRepo.ts"
import { Obligations } from "./obligations/Obligations.ts"
import { CostComparisons } from "./costing/CostComparisons.ts"
import { CostingSettings } from "./costing/CostingSettings.ts"
import { CostingSettingsRepo } from "./costing/CostingSettingsRepo.ts"
import { RateLimiter } from "./ratelimit/RateLimiter.ts"
import { RouteRepo } from "./routes/RouteRepo.ts"
import { Routes } from "./routes/Routes.ts"
import { RouteVehicleUsage } from "./routes/vehicleUsage.ts"
import { OAuthAppRepo } from "./oauth/OAuthAppRepo.ts"
import { OAuthApps } from "./oauth/OAuthApps.ts"
import { OAuthGrantRepo } from "./oauth/OAuthGrantRepo.ts"
import { OAuthServer } from "./oauth/OAuthServer.ts"
import { OAuthSessionRepo } from "./oauth/OAuthSessionRepo.ts"
import type { Ids } from "./shared/Ids.ts"
import { PasswordHashing } from "./shared/PasswordHashing.ts"
import { Transactor } from "./shared/Transactor.ts"
import { TenancyRepo } from "./tenancy/TenancyRepo.ts"
import { Tenancy } from "./tenancy/Tenancy.ts"
import { DeliveryRepo } from "./webhooks/DeliveryRepo.ts"
import { DeliverySignal } from "./webhooks/DeliverySignal.ts"
import { WebhookFanOut } from "./webhooks/fanOut.ts"
import { PortalSessionRepo } from "./webhooks/PortalSessionRepo.ts"
import { PortalSessions } from "./webhooks/PortalSessions.ts"
import { WebhookRepo } from "./webhooks/WebhookRepo.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"
import { ImportRepo } from "./imports/ImportRepo.ts"
import { Imports } from "./imports/Imports.ts"

/**
 * Every storage port on SQL. The outbox hands each event to the webhook
 * fan-out (the only listener core installs). A host with its own storage provides its own
 * layers for these same ports instead (see @opsplatform/testing for the
 * in-memory ones and the conformance suites they pass).
 */
export type StoragePorts =
  | TenancyRepo
  | CredentialRepo
  | LocationRepo
  | ExpenseRepo
  | Outbox
  | Transactor
  | IdempotencyRepo
  | ContractRepo
  | ObligationRepo
  | Notifier
  | RouteRepo
  | CostingSettingsRepo
  | RateLimiter
  | OAuthAppRepo
  | OAuthGrantRepo
  | OAuthSessionRepo
  | WebhookRepo
  | DeliveryRepo
  | DeliverySignal
  | PortalSessionRepo
  | ContactRepo
  | InvoiceRepo
  | PaymentRepo
  | AuditRepo
  | FleetRepo
  | CourtRepo
  | GrantRepo
  | FiscalRepo
  | MailboxRepo
  | DeviceRepo
  | PulseRepo
  | SubscriptionRepo
  | UsageRepo
  | ForwardingRepo
  | ForwardingSignal
  | ImportRepo

export const SqlStorage: Layer.Layer<StoragePorts, never, SqlClient.SqlClient | Ids> = Outbox.layerSql.pipe(
  Layer.provide(WebhookFanOut),
  Layer.provideMerge(Layer.mergeAll(
  TenancyRepo.layerSql,
  CredentialRepo.layerSql,
  LocationRepo.layerSql,
  ExpenseRepo.layerSql,
  Transactor.layerSql,
  IdempotencyRepo.layerSql,
  ContractRepo.layerSql,
  ObligationRepo.layerSql,
  Notifier.layerSql,
  RouteRepo.layerSql,
  CostingSettingsRepo.layerSql,
  RateLimiter.layerSql,
  OAuthAppRepo.layerSql,
  OAuthGrantRepo.layerSql,
  OAuthSessionRepo.layerSql,
  WebhookRepo.layerSql,
  DeliveryRepo.layerSql,
  PortalSessionRepo.layerSql,
  ContactRepo.layerSql,
  InvoiceRepo.layerSql,
  PaymentRepo.layerSql,
  AuditRepo.layerSql,
  FleetRepo.layerSql,
  CourtRepo.layerSql,
  GrantRepo.layerSql,
  FiscalRepo.layerSql,
  MailboxRepo.layerSql,
  DeviceRepo.layerSql,
  PulseRepo.layerSql,
  SubscriptionRepo.layerSql,
  UsageRepo.layerSql,
  ForwardingRepo.layerSql,
  ForwardingSignal.layer,
  ImportRepo.layerSql
).pipe(Layer.provideMerge(DeliverySignal.layer))))

/** Every domain service, over whatever storage is provided. */
export const Services = Layer.mergeAll(
  OAuthApps.layer,
  OAuthServer.layer,
  BankTransactions.layer,
  Grants.layer,
  Devices.layer,
  Display.layer
).pipe(
  Layer.provideMerge(Layer.mergeAll(
    Credentials.layer,
    Locations.layer,
    Expenses.layer,
    Contracts.layer,
    Obligations.layer,
    ObligationMonitor.layer,
    Routes.layer,
    CostingSettings.layer,
    CostComparisons.layer,
    Webhooks.layer,
    PortalSessions.layer,
    Contacts.layer,
    Invoices.layer,
    CreditNotes.layer,
    Audit.layer,
    Fleet.layer.pipe(Layer.provide(RouteVehicleUsage)),
    Court.layer,
    Fiscal.layer,
    FiscalMonitor.layer,
    Mailboxes.layer,
    Pulse.layer,
    PulseRollups.layer,
    Subscriptions.layer,
    Usage.layer,
    Imports.layer
  )),
  Layer.provideMerge(Tenancy.layer),
  // The one hashing pool of the process: every service that hashes a password or PIN shares it.
  Layer.provideMerge(PasswordHashing.layer)
)

export type DomainServices = Layer.Success<typeof Services>
