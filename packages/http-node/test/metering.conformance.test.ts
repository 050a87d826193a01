import { forwardingConformance } from "@opsplatform/testing/conformance"
import { isolatedStorage, testDatabases } from "./support/databases.ts"

// Claims are global, as forwarders are: the contract runs where no forwarder of another test file can take its streams.
for (const db of testDatabases()) forwardingConformance(db.name, isolatedStorage(db, "metering_conformance"))
