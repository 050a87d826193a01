import { webhookStorageConformance } from "@opsplatform/testing/conformance"
import { isolatedStorage, testDatabases } from "./support/databases.ts"

// Claims are global, as workers are: the contract runs where no worker of another test file can take its deliveries.
for (const db of testDatabases()) webhookStorageConformance(db.name, isolatedStorage(db, "webhooks_conformance"))
