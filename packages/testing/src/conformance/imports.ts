import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option, Stream } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { Contacts } from "@opsplatform/core/contacts/Contacts"
import { ContactRepo } from "@opsplatform/core/contacts/ContactRepo"
import { ImportRepo } from "@opsplatform/core/imports/ImportRepo"
import { type CsvFile, Imports } from "@opsplatform/core/imports/Imports"
import { type ImportJob, ImportJobId, PARSE_LEASE_MS } from "@opsplatform/core/imports/model"
import { Invoices } from "@opsplatform/core/invoices/Invoices"
import type { OutboxEvent } from "@opsplatform/core/events/catalog"
import { Outbox } from "@opsplatform/core/events/Outbox"
import { ExpenseRepo } from "@opsplatform/core/expenses/ExpenseRepo"
import { FleetRepo } from "@opsplatform/core/fleet/FleetRepo"
import { LocationRepo } from "@opsplatform/core/locations/LocationRepo"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { generatedCui } from "../importFiles.ts"
import { freshOrganization, timestamps } from "./support.ts"

type Storage = Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>

/** A CSV file as `openCsv` gives it, from rows already split (the header first). */
export const csvRows = (rows: ReadonlyArray<ReadonlyArray<string>>): Effect.Effect<CsvFile> =>
  Effect.succeed({
    encoding: "UTF-8",
    delimiter: ";",
    records: Stream.fromIterable(rows.map((fields, i) => ({ line: i + 1, fields })))
  })

const job = (id: string, at: string, overrides: Partial<ImportJob> = {}): ImportJob => ({
  id: ImportJobId.make(id),
  entity: "contacts",
  preset: "generic",
  filename: "parteneri.csv",
  source: "upload",
  status: "ready",
  encoding: "UTF-8",
  delimiter: ";",
  mapping: {},
  columns: { name: "Denumire" },
  total_rows: 2,
  processed_rows: 2,
  imported_count: 0,
  updated_count: 0,
  skipped_count: 0,
  error_count: 0,
  preview: { news: 2, updates: 0, skips: 0, errors: 0, samples: { news: [], updates: [], skips: [], errors: [] } },
  failure: null,
  applied_at: null,
  reverted_at: null,
  created_at: at,
  updated_at: at,
  finished_at: at,
  ...overrides
})

/** The ImportRepo contract: every implementation must pass it unchanged. */
export const importRepoConformance = (name: string, storage: Storage) =>
  describe(`ImportRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("stores jobs, lists them newest first in pages, and never shows them to another tenant", () =>
        Effect.gen(function*() {
          const repo = yield* ImportRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const at = timestamps(3)
          const jobs = [job(yield* ids.uuid, at[0]!), job(yield* ids.uuid, at[1]!), job(yield* ids.uuid, at[2]!)]
          for (const j of jobs) yield* repo.insertJob(a.live, j)
          assert.deepStrictEqual(yield* repo.findJob(a.live, jobs[0]!.id), Option.some(jobs[0]!))
          const done = { ...jobs[0]!, status: "completed" as const, imported_count: 2, applied_at: at[2]!, updated_at: at[2]! }
          yield* repo.updateJob(a.live, done)
          assert.deepStrictEqual(yield* repo.findJob(a.live, done.id, { forUpdate: true }), Option.some(done))
          const first = yield* repo.listJobs(a.live, yield* pageRequest({ perPage: 2 }))
          assert.deepStrictEqual([first.items.map((j) => j.id), first.meta.total], [[jobs[2]!.id, jobs[1]!.id], 3])
          for (const other of [a.sandbox, b.live]) {
            assert.isTrue(Option.isNone(yield* repo.findJob(other, done.id)))
            assert.strictEqual((yield* repo.listJobs(other, yield* pageRequest({}))).meta.total, 0)
            yield* repo.updateJob(other, { ...done, filename: "hijacked.csv" })
          }
          assert.strictEqual(Option.getOrThrow(yield* repo.findJob(a.live, done.id)).filename, "parteneri.csv")
        }))

      it.effect("keeps a job's errors in file order, its staged rows in batches and its changes, for its tenant only", () =>
        Effect.gen(function*() {
          const repo = yield* ImportRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const j = job(yield* ids.uuid, timestamps(1)[0]!)
          yield* repo.insertJob(a.live, j)
          yield* repo.addIssues(a.live, j.id, 0, [{ row: 3, column: "CUI", message: "bad" }, { row: null, column: null, message: "file" }])
          yield* repo.addIssues(a.live, j.id, 2, [{ row: 1, column: null, message: "later" }])
          assert.deepStrictEqual((yield* repo.issues(a.live, j.id)).map((i) => i.message), ["bad", "file", "later"])
          const staged = (rows: ReadonlyArray<number>) =>
            rows.map((row) => ({
              row,
              key: row === 4 ? null : `RO:${row}`,
              // Rows of one batch may set different fields (a kind only where the file gives one).
              fields: row % 2 === 0
                ? { name: `Row ${row}`, active: true, amount: "1.50", note: null }
                : { name: `Row ${row}`, kind: "supplier", capacity: 12.5 }
            }))
          yield* repo.stageRows(a.live, j.id, staged([1, 2, 4, 7]))
          yield* repo.stageRows(a.live, j.id, staged([9, 12]))
          // A batch at a time, in row order, from the row after `after` — even mid-batch.
          assert.deepStrictEqual(yield* repo.stagedRows(a.live, j.id, 0), staged([1, 2, 4, 7]))
          assert.deepStrictEqual(yield* repo.stagedRows(a.live, j.id, 2), staged([4, 7]))
          assert.deepStrictEqual(yield* repo.stagedRows(a.live, j.id, 7), staged([9, 12]))
          assert.deepStrictEqual((yield* repo.stagedRows(a.live, j.id, 12)), [])
          // Another tenant cannot drop them; the job's own tenant can.
          yield* repo.dropStaged(a.sandbox, j.id)
          assert.deepStrictEqual((yield* repo.stagedRows(a.live, j.id, 7)), staged([9, 12]))
          yield* repo.dropStaged(a.live, j.id)
          assert.deepStrictEqual((yield* repo.stagedRows(a.live, j.id, 0)), [])
          const [t0] = timestamps(1)
          const before = { id: yield* ids.uuid, name: "Before", created_at: t0!, updated_at: t0! }
          const target = yield* ids.uuid
          yield* repo.recordChanges(a.live, j.id, [
            { target_id: target, action: "created", before: null, written_updated_at: t0! },
            { target_id: before.id, action: "updated", before, written_updated_at: t0! }
          ])
          const changes = yield* repo.changes(a.live, j.id)
          assert.deepStrictEqual(
            changes.map((c) => [c.target_id, c.action, c.before?.name ?? null, c.written_updated_at]),
            [[target, "created", null, t0!], [before.id, "updated", "Before", t0!]].sort((x, y) => String(x[0]).localeCompare(String(y[0])))
          )
          for (const other of [a.sandbox, (yield* freshOrganization).live]) {
            assert.deepStrictEqual(yield* repo.issues(other, j.id), [])
            assert.deepStrictEqual(yield* repo.stagedRows(other, j.id, 0), [])
            assert.deepStrictEqual(yield* repo.changes(other, j.id), [])
          }
        }))
    })
  })

/**
 * The Imports service on a storage: previews write nothing, apply writes every
 * valid row in one transaction, revert undoes exactly that or refuses (409),
 * and a parse that lost its process does not stay `parsing`.
 */
export const importsServiceConformance = (name: string, storage: Storage) => {
  /** Inserts of this many rows or more die after writing, as a store failing mid-apply would. */
  const FAIL_AT = 1500
  let failing = false
  const failingInserts = Layer.effect(
    ContactRepo,
    Effect.map(ContactRepo, (repo) =>
      ContactRepo.of({
        ...repo,
        insertAll: (tenant, records) =>
          Effect.flatMap(repo.insertAll(tenant, records), () =>
            failing && records.length > 0 ? Effect.die(new Error("the store failed mid-apply")) : Effect.void)
      }))
  )
  /** What the imports published, in order: their events are the areas' own, written in the apply's transaction. */
  const published: Array<OutboxEvent> = []
  const recordingOutbox = Layer.effect(
    Outbox,
    Effect.map(Outbox, (outbox) =>
      Outbox.of({
        ...outbox,
        publish: (tenant, e) => Effect.tap(outbox.publish(tenant, e), () => Effect.sync(() => void published.push(e)))
      }))
  )
  const services = Layer.mergeAll(Contacts.layer, Invoices.layer).pipe(
    Layer.provideMerge(Imports.layer.pipe(Layer.provide(Layer.mergeAll(failingInserts, recordingOutbox)))),
    Layer.provideMerge(storage)
  )
  const header = ["Denumire", "CUI", "Adresa"]
  const contactRow = (i: number, name = `Firma ${i}`) => [name, `RO${generatedCui(i)}`, `Str. Ștefan ${i}`]
  const names = (tenant: Tenant) =>
    Effect.gen(function*() {
      const page = yield* (yield* Contacts).list(tenant, {}, yield* pageRequest({ perPage: 100 }))
      return page.items.map((c) => `${c.name}|${c.vat_number}|${c.address}`).sort()
    })
  const preview = (tenant: Tenant, rows: ReadonlyArray<ReadonlyArray<string>>) =>
    Effect.flatMap(Imports, (imports) => imports.create(tenant, { entity: "contacts", source: "upload" }, csvRows([header, ...rows])))

  return describe(`Imports conformance: ${name}`, () => {
    layer(services, { timeout: "120 seconds", excludeTestServices: true })((it) => {
      it.effect("preview writes nothing; apply creates and updates; revert leaves the contacts exactly as before", () =>
        Effect.gen(function*() {
          const imports = yield* Imports
          const contacts = yield* Contacts
          const org = yield* freshOrganization
          const kept = yield* contacts.create(org.live, { name: "Old name", kind: "supplier", vat_number: generatedCui(2), address: "Old" })
          const same = yield* contacts.create(org.live, { name: "Firma 3", kind: "customer", vat_number: generatedCui(3), address: "Str. Ștefan 3" })
          const before = yield* names(org.live)
          const ready = yield* preview(org.live, [contactRow(1), contactRow(2), contactRow(3), ["Bad", "RO12345", ""]])
          assert.deepStrictEqual(
            [ready.status, ready.preview.news, ready.preview.updates, ready.preview.skips, ready.preview.errors],
            ["ready", 1, 1, 1, 1]
          )
          assert.deepStrictEqual(yield* names(org.live), before)
          assert.strictEqual((yield* (yield* ImportRepo).stagedRows(org.live, ready.id, 0)).length, 3)
          const done = yield* imports.apply(org.live, ready.id)
          // The staged rows go with the apply that used them.
          assert.deepStrictEqual(yield* (yield* ImportRepo).stagedRows(org.live, ready.id, 0), [])
          assert.deepStrictEqual(
            [done.status, done.imported_count, done.updated_count, done.skipped_count, done.error_count],
            ["completed", 1, 1, 1, 1]
          )
          const updated = yield* contacts.get(org.live, kept.id)
          assert.deepStrictEqual([updated.name, updated.kind, updated.address], ["Firma 2", "supplier", "Str. Ștefan 2"])
          assert.strictEqual((yield* Effect.flip(imports.apply(org.live, ready.id)))._tag, "InvalidTransition")
          const reverted = yield* imports.revert(org.live, ready.id)
          assert.strictEqual(reverted.status, "reverted")
          assert.isNotNull(reverted.reverted_at)
          assert.deepStrictEqual(yield* names(org.live), before)
          assert.deepStrictEqual(yield* contacts.get(org.live, same.id), same)
          // Another tenant sees none of it.
          assert.strictEqual((yield* Effect.flip(imports.get(org.sandbox, ready.id)))._tag, "NotFound")
          assert.strictEqual((yield* Effect.flip(imports.revert(org.sandbox, ready.id)))._tag, "NotFound")
        }))

      it.effect("revert refuses (409) a contact edited since the apply, and one now on an invoice; nothing is reverted", () =>
        Effect.gen(function*() {
          const imports = yield* Imports
          const contacts = yield* Contacts
          const org = yield* freshOrganization
          const edited = yield* imports.apply(org.live, (yield* preview(org.live, [contactRow(10), contactRow(11)])).id)
          const created = (yield* names(org.live)).length
          const mine = (yield* contacts.list(org.live, { q: "Firma 10" }, yield* pageRequest({}))).items[0]!
          // An edit is told apart by its updated_at: made within the apply's millisecond it would not be (docs/decisions.md).
          yield* Effect.sleep("5 millis")
          yield* contacts.update(org.live, mine.id, { phone: "0722000000" })
          const refused = yield* Effect.flip(imports.revert(org.live, edited.id))
          assert.strictEqual(refused._tag, "Conflict")
          assert.match(refused.message, /changed or went since the import was applied/)
          assert.strictEqual((yield* names(org.live)).length, created)
          assert.strictEqual((yield* imports.get(org.live, edited.id)).status, "completed")

          const invoiced = yield* imports.apply(org.live, (yield* preview(org.live, [contactRow(12), contactRow(13)])).id)
          const customer = (yield* contacts.list(org.live, { q: "Firma 13" }, yield* pageRequest({}))).items[0]!
          yield* (yield* Invoices).create(org.live, { contact_id: customer.id, currency: "RON" })
          const inUse = yield* Effect.flip(imports.revert(org.live, invoiced.id))
          assert.strictEqual(inUse._tag, "Conflict")
          assert.match(inUse.message, /now in use: This contact has invoices; it cannot be deleted\. Nothing was reverted\./)
          assert.strictEqual((yield* names(org.live)).length, created + 2)
          assert.strictEqual((yield* imports.get(org.live, invoiced.id)).status, "completed")
        }))

      it.effect("an apply that fails part-way writes nothing and leaves the job ready to apply again", () =>
        Effect.gen(function*() {
          const imports = yield* Imports
          const org = yield* freshOrganization
          const rows = Array.from({ length: FAIL_AT }, (_, i) => contactRow(100 + i))
          const ready = yield* preview(org.live, rows)
          assert.strictEqual(ready.preview.news, FAIL_AT)
          failing = true
          const died = yield* Effect.exit(imports.apply(org.live, ready.id)).pipe(Effect.ensuring(Effect.sync(() => (failing = false))))
          assert.isTrue(died._tag === "Failure")
          assert.strictEqual((yield* (yield* ContactRepo).list(org.live, {}, yield* pageRequest({}))).meta.total, 0)
          assert.strictEqual((yield* imports.get(org.live, ready.id)).status, "ready")
          const done = yield* imports.apply(org.live, ready.id)
          assert.deepStrictEqual([done.status, done.imported_count], ["completed", FAIL_AT])
        }))

      it.effect("a parse without progress for the lease is shown failed (interrupted); a fresh one stays parsing", () =>
        Effect.gen(function*() {
          const imports = yield* Imports
          const repo = yield* ImportRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const now = Date.now()
          const stale = job(yield* ids.uuid, new Date(now - PARSE_LEASE_MS - 60_000).toISOString(), {
            status: "parsing",
            finished_at: null
          })
          const fresh = job(yield* ids.uuid, new Date(now - 1_000).toISOString(), { status: "parsing", finished_at: null })
          yield* repo.insertJob(org.live, stale)
          yield* repo.insertJob(org.live, fresh)
          const listed = yield* imports.list(org.live, yield* pageRequest({}))
          assert.deepStrictEqual(listed.items.map((j) => [j.id, j.status]), [[fresh.id, "parsing"], [stale.id, "failed"]])
          const failed = yield* imports.get(org.live, stale.id)
          assert.strictEqual(failed.failure?.code, "interrupted")
          assert.match(failed.failure?.message ?? "", /no progress for 5 minutes/)
          assert.isNotNull(failed.finished_at)
          // Stored so: the job stays failed, and cannot be applied.
          assert.strictEqual(Option.getOrThrow(yield* repo.findJob(org.live, stale.id)).status, "failed")
          assert.strictEqual((yield* Effect.flip(imports.apply(org.live, stale.id)))._tag, "InvalidTransition")
        }))

      it.effect("locations match by code (any case): a second import updates, its revert restores", () =>
        Effect.gen(function*() {
          const imports = yield* Imports
          const locations = yield* LocationRepo
          const org = yield* freshOrganization
          const create = (rows: ReadonlyArray<ReadonlyArray<string>>) =>
            Effect.flatMap(
              imports.create(org.live, { entity: "locations", source: "upload" }, csvRows([["Denumire", "Cod"], ...rows])),
              (j) => imports.apply(org.live, j.id)
            )
          const first = yield* create([["Depozit Nord", "DN1"], ["Magazin", "M2"]])
          assert.strictEqual(first.imported_count, 2)
          const listed = () =>
            Effect.gen(function*() {
              const page = yield* locations.list(org.live, {}, yield* pageRequest({}))
              return page.items.map((l) => `${l.code}:${l.name}`).sort()
            })
          const after = yield* listed()
          const second = yield* create([["Depozit Nord Nou", "dn1"]])
          assert.deepStrictEqual([second.imported_count, second.updated_count], [0, 1])
          yield* imports.revert(org.live, second.id)
          assert.deepStrictEqual(yield* listed(), after)
        }))

      it.effect("vehicles match by plate and publish their events; expenses match by a reference the expense never shows; reverts restore both", () =>
        Effect.gen(function*() {
          const imports = yield* Imports
          const fleet = yield* FleetRepo
          const expenses = yield* ExpenseRepo
          const org = yield* freshOrganization
          const run = (entity: "fleet_vehicles" | "expenses", rows: ReadonlyArray<ReadonlyArray<string>>) =>
            Effect.flatMap(imports.create(org.live, { entity, source: "upload" }, csvRows(rows)), (j) => imports.apply(org.live, j.id))
          const page = yield* pageRequest({})
          const vehicles = () => Effect.map(fleet.list(org.live, {}, page), (listed) => listed.items.map((v) => `${v.plate}:${v.make}`).sort())
          const eventsFrom = published.length
          const vehicleHeader = ["Nr. înmatriculare", "Combustibil", "Marca"]
          const first = yield* run("fleet_vehicles", [vehicleHeader, ["B 123 ABC", "motorină", "Dacia"], ["CJ-12-XYZ", "benzină", "Ford"]])
          assert.deepStrictEqual(yield* vehicles(), ["B123ABC:Dacia", "CJ12XYZ:Ford"])
          const second = yield* run("fleet_vehicles", [vehicleHeader, ["b-123-abc", "motorină", "Renault"]])
          assert.deepStrictEqual([second.imported_count, second.updated_count], [0, 1])
          assert.deepStrictEqual(yield* vehicles(), ["B123ABC:Renault", "CJ12XYZ:Ford"])
          yield* imports.revert(org.live, second.id)
          assert.deepStrictEqual(yield* vehicles(), ["B123ABC:Dacia", "CJ12XYZ:Ford"])
          yield* imports.revert(org.live, first.id)
          assert.deepStrictEqual(yield* vehicles(), [])
          // Created and updated in the apply's order; the revert deletes in its own (by id).
          const events = published.slice(eventsFrom).map((e) => `${e.type}:${e.data.plate}:${e.data.changed_fields ?? ""}`)
          assert.deepStrictEqual(events.slice(0, 3), [
            "fleet_vehicle.created:B123ABC:",
            "fleet_vehicle.created:CJ12XYZ:",
            "fleet_vehicle.updated:B123ABC:make"
          ])
          assert.deepStrictEqual(events.slice(3).sort(), ["fleet_vehicle.deleted:B123ABC:", "fleet_vehicle.deleted:CJ12XYZ:"])

          const header = ["Nr. document", "Descriere", "Suma", "Data"]
          const bought = yield* run("expenses", [header, ["F-1", "Motorină Ploiești", "1.234,56", "05.03.2026"], ["", "Fără referință", "10", "2026-03-06"]])
          assert.strictEqual(bought.imported_count, 2)
          const listed = (yield* expenses.list(org.live, {}, page)).items
          assert.deepStrictEqual(listed.map((e) => [e.description, e.amount, "external_ref" in e]).sort(), [
            ["Fără referință", "10.00", false],
            ["Motorină Ploiești", "1234.56", false]
          ])
          const [referenced] = yield* expenses.findByExternalRefs(org.live, ["F-1"])
          assert.deepStrictEqual([referenced?.external_ref, referenced?.description], ["F-1", "Motorină Ploiești"])
          const corrected = yield* run("expenses", [header, ["F-1", "Motorină Ploiești", "1.250,00", "05.03.2026"]])
          assert.deepStrictEqual([corrected.imported_count, corrected.updated_count], [0, 1])
          assert.strictEqual(Option.getOrThrow(yield* expenses.find(org.live, referenced!.id)).amount, "1250.00")
          yield* imports.revert(org.live, corrected.id)
          assert.deepStrictEqual(yield* expenses.find(org.live, referenced!.id), Option.some(listed.find((e) => e.id === referenced!.id)!))
          assert.deepStrictEqual(yield* expenses.findByExternalRefs(org.sandbox, ["F-1"]), [])
        }))
    })
  })
}

export const importsConformance = (name: string, storage: Storage) => {
  importRepoConformance(name, storage)
  importsServiceConformance(name, storage)
}
