import { normalizePlate, plateIssue } from "../fleet/rules.ts"
import { currencyCodes } from "../shared/currencies.ts"
import { normalizeVatNumber, vatNumberIssue } from "../contacts/rules.ts"
import { MAX_EXTERNAL_REF_CHARS } from "../expenses/model.ts"
import { isDateInRange } from "../shared/limits.ts"
import { exceedsCharacters, isCalendarDate } from "../shared/schemas.ts"
import type { ImportEntity, ImportIssue, ImportPreset } from "./model.ts"

/**
 * Pure rules of imports: text normalisation, header matching, presets and the
 * conversion of one row into the fields of a record. Decisions behind them:
 * docs/decisions.md, "Imports".
 */

// ---------- text ----------

const asciiOnly = /^[\x00-\x7f]*$/

/**
 * Romanian letters as they should be: ş ţ with a cedilla (what Windows-1250
 * and ISO-8859-2 carry) become ș ț with a comma below; composed (NFC). The
 * import's parser thread applies the same map before parsing
 * (http-node `imports/csvText.ts`, which loads no core module).
 */
export const normalizeRomanian = (text: string): string =>
  asciiOnly.test(text) ? text : text.normalize("NFC").replace(/[\u015E\u015F\u0162\u0163]/g, (c) =>
    c === "\u015F" ? "\u0219" : c === "\u015E" ? "\u0218" : c === "\u0163" ? "\u021B" : "\u021A")

/** A header as it is compared: no diacritics, lower case, letters and digits only ("Nr. Reg. Com." → "nrregcom"). */
export const headerKey = (header: string): string =>
  header.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]/g, "")

// ---------- values ----------

/**
 * A non-negative amount as a two-decimal string, from "1.234,56", "1234,5",
 * "1,234.56", "1 234.56" or "1234". With both separators the last one is the
 * decimal one; a comma alone is decimal; dots alone are thousands when there
 * are several or when one is followed by exactly three digits after a group of one to three.
 */
export const parseAmount = (text: string): string | undefined => {
  let t = text.replace(/[\s\u00A0]/g, "")
  if (t === "") return undefined
  const lastComma = t.lastIndexOf(",")
  const lastDot = t.lastIndexOf(".")
  if (lastComma >= 0 && lastDot >= 0) {
    const decimal = lastComma > lastDot ? "," : "."
    const thousands = decimal === "," ? "." : ","
    t = t.split(thousands).join("").replace(decimal, ".")
  } else if (lastComma >= 0) {
    if (t.indexOf(",") !== lastComma) return undefined
    t = t.replace(",", ".")
  } else if (lastDot >= 0 && (t.indexOf(".") !== lastDot || /^\d{1,3}\.\d{3}$/.test(t))) {
    if (!/^\d{1,3}(\.\d{3})+$/.test(t)) return undefined
    t = t.split(".").join("")
  }
  const m = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(t)
  if (m === null) return undefined
  const whole = String(Number(m[1]))
  return `${whole}.${(m[2] ?? "").padEnd(2, "0")}`
}

/** A decimal number (comma or dot decimal), or undefined. */
export const parseNumber = (text: string): number | undefined => {
  const t = text.replace(/[\s\u00A0]/g, "").replace(",", ".")
  if (!/^-?\d+(\.\d+)?$/.test(t)) return undefined
  return Number(t)
}

/** `YYYY-MM-DD` from dd.mm.yyyy, dd/mm/yyyy, dd-mm-yyyy or ISO (with or without a time), within the API's dates (`IsoDate`). */
export const parseDate = (text: string): string | undefined => {
  const t = text.trim()
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:[T ].*)?$/.exec(t)
  const ro = /^(\d{1,2})[./-](\d{1,2})[./-](\d{4})$/.exec(t)
  const date = iso !== null
    ? `${iso[1]}-${iso[2]}-${iso[3]}`
    : ro !== null
    ? `${ro[3]}-${ro[2]!.padStart(2, "0")}-${ro[1]!.padStart(2, "0")}`
    : undefined
  return date !== undefined && isCalendarDate(date) && isDateInRange(date) ? date : undefined
}

const truthy = new Set(["da", "yes", "true", "1", "x", "y", "d", "activ", "active"])
const falsy = new Set(["nu", "no", "false", "0", "n", "inactiv", "inactive"])

/** A yes/no in Romanian or English ("da", "nu", "true", "1", "x"…). */
export const parseBoolean = (text: string): boolean | undefined => {
  const k = headerKey(text)
  return truthy.has(k) ? true : falsy.has(k) ? false : undefined
}

// ---------- entities ----------

export type FieldValue = string | number | boolean | null

/** The fields one row sets, as stored in the target record. */
export type RowFields = Readonly<Record<string, FieldValue>>

export interface FieldSpec {
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  /** The column must be in the file and the value present on every row. */
  readonly required?: boolean
}

/**
 * The key a record is matched by, from its fields — a converted row's or a
 * stored record's alike: contacts by country and VAT number, locations by
 * code in any case, vehicles by plate, expenses by external reference (each
 * the target table's unique index); null when the record has none.
 */
export const matchKey = (entity: ImportEntity, fields: Readonly<Record<string, unknown>>): string | null => {
  switch (entity) {
    case "contacts":
      return fields.vat_number == null ? null : `${String(fields.country)}:${String(fields.vat_number)}`
    case "locations":
      return fields.code == null ? null : String(fields.code).toLowerCase()
    case "fleet_vehicles":
      return fields.plate == null ? null : String(fields.plate)
    case "expenses":
      return fields.external_ref == null ? null : String(fields.external_ref)
  }
}

export interface Converted {
  readonly fields: RowFields
  /** What the row is matched by (contacts: VAT number, locations: code, vehicles: plate, expenses: external reference). */
  readonly key: string | null
  readonly issues: ReadonlyArray<{ readonly column: string; readonly message: string }>
}

export interface EntitySpec {
  readonly entity: ImportEntity
  readonly keyField: string
  readonly fields: ReadonlyArray<FieldSpec>
  /** Turns the row's raw texts (field → trimmed text; absent when the file has no column for it) into fields. */
  readonly convert: (raw: Readonly<Record<string, string>>) => Converted
}

/** Builds a row: collects issues and the converted values (a class: no closures made per row). */
class RowBuilder {
  readonly fields: Record<string, FieldValue> = {}
  readonly issues: Array<{ column: string; message: string }> = []
  text(raw: Readonly<Record<string, string>>, name: string, max: number, required = false): void {
    const v = raw[name]
    if (v === undefined) return
    if (v === "") {
      if (required) this.issues.push({ column: name, message: "is required" })
      else this.fields[name] = null
      return
    }
    if (exceedsCharacters(v, max)) this.issues.push({ column: name, message: `must be at most ${max} characters` })
    else this.fields[name] = v
  }
  issue(column: string, message: string): void {
    this.issues.push({ column, message })
  }
}
const builder = () => new RowBuilder()

const contactKinds: Readonly<Record<string, "customer" | "supplier" | "both">> = {
  customer: "customer", client: "customer", clienti: "customer",
  supplier: "supplier", furnizor: "supplier", furnizori: "supplier",
  both: "both", ambele: "both", clientsifurnizor: "both", clientfurnizor: "both"
}

const contacts: EntitySpec = {
  entity: "contacts",
  keyField: "vat_number",
  fields: [
    { name: "name", required: true, aliases: ["Denumire", "Nume", "Name", "Company", "Companie", "Firma", "Client", "Partener", "Denumire client", "Nume client", "Denumire partener", "den_par"] },
    { name: "vat_number", aliases: ["CUI", "CIF", "Cod fiscal", "Codul fiscal", "CIF/CNP", "CUI/CIF", "CIF/CUI", "VAT", "VAT number", "VAT ID", "Tax ID", "Cod_fiscal", "cod_par"] },
    { name: "registration_number", aliases: ["Nr. Reg. Com.", "Nr. Reg. Comertului", "Reg. Com.", "Registrul Comertului", "Nr. Registrul Comertului", "Nr. ORC", "Registration number", "Trade register", "Reg_com", "reg_com_p"] },
    { name: "address", aliases: ["Adresa", "Adresă", "Address", "Sediu", "Strada", "adr_par"] },
    { name: "city", aliases: ["Localitate", "Localitatea", "Oras", "Oraș", "City", "loc_adr"] },
    { name: "county", aliases: ["Judet", "Județ", "County", "jud_par"] },
    { name: "country", aliases: ["Tara", "Țara", "Country", "Cod tara", "tara_adr"] },
    { name: "email", aliases: ["Email", "E-mail", "Adresa email", "Mail", "e_mail_par"] },
    { name: "phone", aliases: ["Telefon", "Tel", "Tel.", "Phone", "Mobil", "tel_par"] },
    { name: "kind", aliases: ["Tip", "Tip partener", "Kind", "Type"] }
  ],
  convert: (raw) => {
    const b = builder()
    b.text(raw, "name", 200, true)
    let country = "RO"
    if (raw.country !== undefined && raw.country !== "") {
      const c = raw.country.toUpperCase()
      if (/^[A-Z]{2}$/.test(c)) country = c
      else if (headerKey(c) === "romania") country = "RO"
      else b.issue("country", "must be an ISO 3166-1 alpha-2 country code, e.g. RO")
    }
    b.fields.country = country
    let key: string | null = null
    const vat = raw.vat_number
    if (vat !== undefined) {
      if (vat === "") b.fields.vat_number = null
      else {
        const normalized = normalizeVatNumber(country, vat)
        if (normalized === undefined) b.issue("vat_number", vatNumberIssue(country))
        else {
          b.fields.vat_number = normalized
          key = matchKey("contacts", b.fields)
        }
      }
    }
    b.text(raw, "registration_number", 40)
    const parts = [raw.address, raw.city, raw.county].filter((p): p is string => p !== undefined && p !== "")
    if (raw.address !== undefined || raw.city !== undefined || raw.county !== undefined) {
      const address = parts.join(", ")
      if (exceedsCharacters(address, 500)) b.issue("address", "must be at most 500 characters")
      else b.fields.address = address === "" ? null : address
    }
    if (raw.email !== undefined) {
      // Programs put several addresses in one cell; the first is the contact's.
      const first = raw.email.split(/[;,\s]+/).find((e) => e !== "") ?? ""
      if (first === "") b.fields.email = null
      else if (!/^[^\s@]+@[^\s@]+$/.test(first) || first.length > 254) b.issue("email", "must be an email address")
      else b.fields.email = first
    }
    b.text(raw, "phone", 40)
    if (raw.kind !== undefined && raw.kind !== "") {
      const kind = contactKinds[headerKey(raw.kind)]
      if (kind === undefined) b.issue("kind", "must be customer, supplier or both (client, furnizor, ambele)")
      else b.fields.kind = kind
    }
    return { fields: b.fields, key, issues: b.issues }
  }
}

const verticals = new Set(["retail", "restaurant", "warehouse", "office", "manufacturing", "healthcare", "hospitality", "services", "other"])
const verticalAliases: Readonly<Record<string, string>> = {
  magazin: "retail", restaurant: "restaurant", depozit: "warehouse", birou: "office", fabrica: "manufacturing",
  productie: "manufacturing", clinica: "healthcare", hotel: "hospitality", servicii: "services", altele: "other"
}

const locations: EntitySpec = {
  entity: "locations",
  keyField: "code",
  fields: [
    { name: "code", aliases: ["Cod", "Cod locatie", "Cod punct de lucru", "Code", "Location code"] },
    { name: "name", required: true, aliases: ["Denumire", "Nume", "Name", "Locatie", "Punct de lucru", "Location"] },
    { name: "address", aliases: ["Adresa", "Address"] },
    { name: "vertical_type", aliases: ["Tip", "Tip locatie", "Vertical", "Vertical type", "Type"] },
    { name: "is_primary", aliases: ["Principal", "Sediu principal", "Primary", "Is primary"] },
    { name: "latitude", aliases: ["Latitudine", "Latitude", "Lat"] },
    { name: "longitude", aliases: ["Longitudine", "Longitude", "Lng", "Lon"] }
  ],
  convert: (raw) => {
    const b = builder()
    b.text(raw, "name", 200, true)
    let key: string | null = null
    if (raw.code !== undefined) {
      if (raw.code === "") b.fields.code = null
      else if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/.test(raw.code)) {
        b.issue("code", "must be 1 to 40 letters, digits, '.', '_' or '-', starting with a letter or digit")
      } else {
        b.fields.code = raw.code
        key = matchKey("locations", b.fields)
      }
    }
    b.text(raw, "address", 500)
    if (raw.vertical_type !== undefined && raw.vertical_type !== "") {
      const k = headerKey(raw.vertical_type)
      const v = verticals.has(raw.vertical_type.toLowerCase()) ? raw.vertical_type.toLowerCase() : verticalAliases[k]
      if (v === undefined) b.issue("vertical_type", `must be one of ${[...verticals].join(", ")}`)
      else b.fields.vertical_type = v
    }
    if (raw.is_primary !== undefined && raw.is_primary !== "") {
      const v = parseBoolean(raw.is_primary)
      if (v === undefined) b.issue("is_primary", "must be yes or no (da, nu, true, false, 1, 0)")
      else b.fields.is_primary = v
    }
    for (const [name, limit] of [["latitude", 90], ["longitude", 180]] as const) {
      const text = raw[name]
      if (text === undefined) continue
      if (text === "") {
        b.fields[name] = null
        continue
      }
      const n = parseNumber(text)
      if (n === undefined || Math.abs(n) > limit) b.issue(name, `must be a number between -${limit} and ${limit}`)
      else b.fields[name] = n
    }
    return { fields: b.fields, key, issues: b.issues }
  }
}

const fuelAliases: Readonly<Record<string, string>> = {
  diesel: "diesel", motorina: "diesel", petrol: "petrol", benzina: "petrol", gasoline: "petrol",
  electric: "electric", hybrid: "hybrid", hibrid: "hybrid", lpg: "lpg", gpl: "lpg"
}

const vehicles: EntitySpec = {
  entity: "fleet_vehicles",
  keyField: "plate",
  fields: [
    { name: "plate", required: true, aliases: ["Nr. înmatriculare", "Numar inmatriculare", "Număr de înmatriculare", "Nr. auto", "Numar auto", "Plate", "Registration", "Licence plate", "License plate"] },
    { name: "make", aliases: ["Marca", "Make", "Brand"] },
    { name: "model", aliases: ["Model"] },
    { name: "fuel_type", required: true, aliases: ["Combustibil", "Carburant", "Fuel", "Fuel type"] },
    { name: "capacity_kg", aliases: ["Sarcina utila", "Capacitate kg", "Capacitate", "Capacity kg", "Payload"] },
    { name: "capacity_parcels", aliases: ["Colete", "Capacitate colete", "Capacity parcels", "Parcels"] },
    { name: "fuel_consumption_l_per_100km", aliases: ["Consum", "Consum l/100km", "Consumption", "Fuel consumption"] },
    { name: "active", aliases: ["Activ", "Active"] }
  ],
  convert: (raw) => {
    const b = builder()
    let key: string | null = null
    if (raw.plate === undefined || raw.plate === "") b.issue("plate", "is required")
    else {
      const plate = normalizePlate(raw.plate)
      if (plate === undefined) b.issue("plate", plateIssue)
      else {
        b.fields.plate = plate
        key = matchKey("fleet_vehicles", b.fields)
      }
    }
    b.text(raw, "make", 100)
    b.text(raw, "model", 100)
    if (raw.fuel_type === undefined || raw.fuel_type === "") b.issue("fuel_type", "is required")
    else {
      const fuel = fuelAliases[headerKey(raw.fuel_type)]
      if (fuel === undefined) b.issue("fuel_type", "must be diesel, petrol, electric, hybrid or lpg (motorină, benzină, hibrid, GPL)")
      else b.fields.fuel_type = fuel
    }
    for (const [name, max] of [["capacity_kg", 1_000_000], ["fuel_consumption_l_per_100km", 100]] as const) {
      const text = raw[name]
      if (text === undefined) continue
      if (text === "") {
        b.fields[name] = null
        continue
      }
      const n = parseNumber(text.replace(/\.(?=\d{3}(\D|$))/g, ""))
      if (n === undefined || n <= 0 || n > max || Math.abs(n * 1000 - Math.round(n * 1000)) > 1e-6) {
        b.issue(name, `must be a positive number up to ${max} with at most three decimals`)
      } else b.fields[name] = n
    }
    if (raw.capacity_parcels !== undefined) {
      const text = raw.capacity_parcels
      if (text === "") b.fields.capacity_parcels = null
      else if (!/^\d{1,7}$/.test(text) || Number(text) < 1 || Number(text) > 1_000_000) {
        b.issue("capacity_parcels", "must be a whole number from 1 to 1000000")
      } else b.fields.capacity_parcels = Number(text)
    }
    if (raw.active !== undefined && raw.active !== "") {
      const v = parseBoolean(raw.active)
      if (v === undefined) b.issue("active", "must be yes or no (da, nu, true, false, 1, 0)")
      else b.fields.active = v
    }
    return { fields: b.fields, key, issues: b.issues }
  }
}

const expenseCategories = new Set([
  "fuel", "tolls", "parking", "vehicle_maintenance", "travel", "meals", "office_supplies", "utilities", "rent",
  "software", "professional_services", "marketing", "insurance", "taxes_fees", "other"
])
const categoryAliases: Readonly<Record<string, string>> = {
  combustibil: "fuel", carburant: "fuel", taxadrum: "tolls", rovinieta: "tolls", parcare: "parking",
  service: "vehicle_maintenance", intretinere: "vehicle_maintenance", deplasare: "travel", transport: "travel",
  masa: "meals", protocol: "meals", birotica: "office_supplies", utilitati: "utilities", chirie: "rent",
  software: "software", consultanta: "professional_services", servicii: "professional_services",
  publicitate: "marketing", marketing: "marketing", asigurare: "insurance", asigurari: "insurance",
  taxe: "taxes_fees", impozite: "taxes_fees", altele: "other", diverse: "other"
}

const expenses: EntitySpec = {
  entity: "expenses",
  keyField: "external_ref",
  fields: [
    { name: "external_ref", aliases: ["Referinta", "Referință", "Nr. document", "Numar document", "Document", "Nr. doc", "Reference", "External reference", "External ref"] },
    { name: "description", required: true, aliases: ["Descriere", "Explicatie", "Explicație", "Detalii", "Description", "Details"] },
    { name: "category", aliases: ["Categorie", "Category"] },
    { name: "amount", required: true, aliases: ["Suma", "Sumă", "Valoare", "Total", "Amount", "Value"] },
    { name: "currency", aliases: ["Moneda", "Monedă", "Valuta", "Currency"] },
    { name: "expense_date", required: true, aliases: ["Data", "Dată", "Data document", "Date", "Expense date"] }
  ],
  convert: (raw) => {
    const b = builder()
    let key: string | null = null
    if (raw.external_ref !== undefined) {
      if (raw.external_ref === "") b.fields.external_ref = null
      else if (exceedsCharacters(raw.external_ref, MAX_EXTERNAL_REF_CHARS)) {
        b.issue("external_ref", `must be at most ${MAX_EXTERNAL_REF_CHARS} characters`)
      }
      else {
        b.fields.external_ref = raw.external_ref
        key = matchKey("expenses", b.fields)
      }
    }
    b.text(raw, "description", 500, true)
    const categoryText = raw.category ?? ""
    if (categoryText === "") b.fields.category = "other"
    else {
      const c = expenseCategories.has(categoryText.toLowerCase()) ? categoryText.toLowerCase() : categoryAliases[headerKey(categoryText)]
      if (c === undefined) b.issue("category", `must be one of ${[...expenseCategories].join(", ")}`)
      else b.fields.category = c
    }
    if (raw.amount === undefined || raw.amount === "") b.issue("amount", "is required")
    else {
      const amount = parseAmount(raw.amount)
      if (amount === undefined) b.issue("amount", "must be a non-negative amount with at most two decimals, e.g. 1.234,56 or 1234.56")
      else b.fields.amount = amount
    }
    const currency = (raw.currency ?? "").toUpperCase()
    if (currency === "") b.fields.currency = "RON"
    else if (!currencyCodes.has(currency)) b.issue("currency", "must be an ISO 4217 currency code, e.g. RON")
    else b.fields.currency = currency
    if (raw.expense_date === undefined || raw.expense_date === "") b.issue("expense_date", "is required")
    else {
      const date = parseDate(raw.expense_date)
      if (date === undefined) b.issue("expense_date", "must be a date as dd.mm.yyyy or yyyy-mm-dd")
      else b.fields.expense_date = date
    }
    return { fields: b.fields, key, issues: b.issues }
  }
}

export const entitySpecs: Readonly<Record<ImportEntity, EntitySpec>> = {
  contacts,
  locations,
  fleet_vehicles: vehicles,
  expenses
}

// ---------- presets ----------

/**
 * Partner-list layouts of Romanian programs (field → the program's header).
 * SmartBill: the client fields its help names (ajutor.smartbill.ro, "Adaugare
 * clienti"); SoftPro: its documented CSV partner import
 * (softpro.ro/import-parteneri-csv). See docs/decisions.md, "Imports".
 */
export const presets: Readonly<Record<Exclude<ImportPreset, "generic">, {
  readonly entity: ImportEntity
  readonly columns: Readonly<Record<string, string>>
}>> = {
  smartbill: {
    entity: "contacts",
    columns: {
      name: "Denumire",
      vat_number: "CIF/CNP",
      registration_number: "Reg. com.",
      address: "Adresa",
      city: "Localitate",
      county: "Judet",
      country: "Tara",
      email: "Email",
      phone: "Telefon"
    }
  },
  softpro: {
    entity: "contacts",
    columns: {
      vat_number: "cod_par",
      name: "den_par",
      registration_number: "reg_com_p",
      county: "jud_par",
      city: "loc_adr",
      address: "adr_par",
      country: "tara_adr",
      email: "e_mail_par",
      phone: "tel_par"
    }
  }
}

/** Where each field is read from: field → column index. */
export interface ResolvedColumns {
  readonly indexes: Readonly<Record<string, number>>
  /** field → the header as written in the file. */
  readonly names: Readonly<Record<string, string>>
}

/**
 * Matches the header row to the entity's fields: the caller's mapping first,
 * then the preset's layout, then the aliases. Fails with the issues that make
 * the file unreadable (no known column, a required column missing, a mapping
 * naming a column the file lacks).
 */
export const resolveColumns = (
  entity: ImportEntity,
  preset: ImportPreset,
  header: ReadonlyArray<string>,
  mapping: Readonly<Record<string, string>>
): { readonly ok: true; readonly columns: ResolvedColumns } | { readonly ok: false; readonly code: string; readonly message: string } => {
  const spec = entitySpecs[entity]
  const keys = header.map(headerKey)
  const indexes: Record<string, number> = {}
  const names: Record<string, string> = {}
  const take = (field: string, index: number) => {
    if (indexes[field] !== undefined || Object.values(indexes).includes(index)) return
    indexes[field] = index
    names[field] = header[index]!
  }
  const known = new Set(spec.fields.map((f) => f.name))
  for (const [field, column] of Object.entries(mapping)) {
    if (!known.has(field)) {
      return { ok: false, code: "unknown_field", message: `The mapping names "${field}", which is not a field of ${entity}: use ${[...known].join(", ")}` }
    }
    const index = keys.indexOf(headerKey(column))
    if (index < 0) return { ok: false, code: "unknown_column", message: `The mapping names the column "${column}", which the file's header does not have` }
    take(field, index)
  }
  if (preset !== "generic") {
    for (const [field, column] of Object.entries(presets[preset].columns)) {
      const index = keys.indexOf(headerKey(column))
      if (index >= 0) take(field, index)
    }
  }
  for (const field of spec.fields) {
    for (const alias of [field.name, ...field.aliases]) {
      const index = keys.indexOf(headerKey(alias))
      if (index >= 0) {
        take(field.name, index)
        break
      }
    }
  }
  if (Object.keys(indexes).length === 0) {
    return {
      ok: false,
      code: "no_known_column",
      message: `None of the file's columns (${header.slice(0, 10).join(", ")}) is a known column of ${entity}: expected e.g. ${
        spec.fields.slice(0, 4).map((f) => f.aliases[0]).join(", ")
      }, or give a mapping`
    }
  }
  const missing = spec.fields.filter((f) => f.required === true && indexes[f.name] === undefined).map((f) => f.name)
  if (missing.length > 0) {
    return { ok: false, code: "missing_column", message: `The file has no column for ${missing.join(", ")} (required for ${entity}); give a mapping` }
  }
  return { ok: true, columns: { indexes, names } }
}

/** A row's raw texts by field, or the issue of a row whose field count does not fit the header. */
export const rowTexts = (
  columns: ResolvedColumns,
  headerLength: number,
  fields: ReadonlyArray<string>
): Record<string, string> | string => {
  if (fields.length > headerLength) return `has ${fields.length} fields, the header has ${headerLength}`
  const raw: Record<string, string> = {}
  for (const [field, index] of columnList(columns)) raw[field] = (fields[index] ?? "").trim()
  return raw
}

const columnLists = new WeakMap<ResolvedColumns, ReadonlyArray<readonly [string, number]>>()
/** The columns as (field, index) pairs, listed once per file rather than once per row. */
const columnList = (columns: ResolvedColumns) => {
  let list = columnLists.get(columns)
  if (list === undefined) columnLists.set(columns, list = Object.entries(columns.indexes))
  return list
}

/** A field value as the preview shows it. */
export const showValue = (v: FieldValue | undefined): string | null =>
  v === null || v === undefined ? null : String(v)

/** Sorts issues by row then column, the order the errors list and its CSV use. */
export const issueOrder = (a: ImportIssue, b: ImportIssue): number =>
  (a.row ?? 0) - (b.row ?? 0) || (a.column ?? "").localeCompare(b.column ?? "")
