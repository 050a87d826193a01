import { randomBytes } from "node:crypto"
import { afterAll, inject } from "vitest"
import { databaseUrl, onPostgres } from "./databases.ts"

/**
 * A vitest `setupFiles` entry: with DATABASE_URL, this test file gets a
 * PostgreSQL database of its own, cloned from the run's migrated template,
 * and DATABASE_URL points at it for the file and every process it starts. It
 * is dropped after the file's own hooks have run.
 */
const template = inject("postgresTemplate")
if (template !== null) {
  const name = `${template.template}_${randomBytes(5).toString("hex")}`
  await onPostgres(template.adminUrl, [`CREATE DATABASE ${name} TEMPLATE ${template.template}`])
  process.env.DATABASE_URL = databaseUrl(template.adminUrl, name)
  afterAll(() => onPostgres(template.adminUrl, [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]).then(() => undefined))
}
