import type { FiscalFact, FiscalStatus } from "../contacts/model.ts"
import { isCalendarDate } from "../shared/schemas.ts"

/**
 * The tax authority's answer (ANAF `PlatitorTvaRest` v9) read as statuses:
 * `{ cod, message, found: [...], notFound: [...] }`, each found item in its
 * groups `date_generale`, `inregistrare_scop_Tva`, `inregistrare_RTVAI`,
 * `stare_inactiv`. Read leniently: ANAF leaves fields blank (`""`, `" "`),
 * writes some dates `DD.MM.YYYY`, and older versions spell `notfound` in
 * lower case. How each fact is read is decided in docs/decisions.md,
 * "Fiscal status".
 */

export interface RegistryAnswer {
  /** Statuses by CUI (digits, no `RO`). */
  readonly found: ReadonlyMap<string, FiscalStatus>
  /** CUIs the registry does not know: unknown, never a change. */
  readonly notFound: ReadonlySet<string>
}

type Fields = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Fields => typeof value === "object" && value !== null && !Array.isArray(value)

const group = (item: Fields, name: string): Fields => {
  const value = item[name]
  return isObject(value) ? value : {}
}

const text = (value: unknown): string =>
  typeof value === "string" ? value.trim() : typeof value === "number" && Number.isFinite(value) ? String(value) : ""

const flag = (value: unknown): boolean => value === true || (typeof value === "string" && value.trim().toLowerCase() === "true")

/** A CUI as ANAF writes it (a number, sometimes a string, maybe with `RO`) as stored: digits without leading zeros. */
export const anafCui = (value: unknown): string | undefined => {
  const digits = text(value).toUpperCase().replace(/^RO/, "").replace(/^0+/, "")
  return /^\d{1,10}$/.test(digits) ? digits : undefined
}

/** A date as ANAF writes it (`2024-12-12`, `12.12.2024`, blank) as YYYY-MM-DD, or null when there is none. */
export const anafDate = (value: unknown): string | null => {
  const s = text(value)
  const iso = /^(\d{4})-(\d{2})-(\d{2})/.exec(s)
  const dotted = /^(\d{2})\.(\d{2})\.(\d{4})$/.exec(s)
  const date = iso !== null ? `${iso[1]}-${iso[2]}-${iso[3]}` : dotted !== null ? `${dotted[3]}-${dotted[2]}-${dotted[1]}` : null
  return date !== null && date >= "0001-01-01" && isCalendarDate(date) ? date : null
}

const latest = (dates: ReadonlyArray<string | null>): string | null =>
  dates.reduce<string | null>((max, d) => (d !== null && (max === null || d > max) ? d : max), null)

/** Upper case without diacritics, so "în insolvență" and "IN INSOLVENTA" read alike. */
const plain = (s: string): string => s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toUpperCase()

/** The date of a registration state, "RADIERE din data 29.03.2024". */
const stateDate = (state: string): string | null => {
  const m = /DIN DATA\s+(\S+)/.exec(plain(state))
  return m === null ? null : anafDate(m[1])
}

const insolvencyWords = /INSOLVEN|FALIMENT|REORGANIZARE JUDICIARA/
const struckOffWords = /^(RADIERE|RADIAT)|DIZOLV/

const fact = (status: boolean, effective_date: string | null): FiscalFact => ({ status, effective_date })

/** One found item as a status, or undefined when it names no CUI. */
export const anafStatus = (item: unknown): FiscalStatus | undefined => {
  if (!isObject(item)) return undefined
  const general = group(item, "date_generale")
  const cui = anafCui(general.cui)
  if (cui === undefined) return undefined
  const state = text(general.stare_inregistrare)
  const name = text(general.denumire)

  const inactivity = group(item, "stare_inactiv")
  const inactive = flag(inactivity.statusInactivi)

  const struckOffByState = struckOffWords.test(plain(state))
  const struckOnDate = anafDate(inactivity.dataRadiere)
  const struckOff = struckOnDate !== null || struckOffByState

  // ANAF has no insolvency field: the trade registry's mention reaches it only as text, in the
  // registration state or in the name the insolvent company must carry (docs/decisions.md).
  const insolventByState = insolvencyWords.test(plain(state))
  const insolvent = insolventByState || insolvencyWords.test(plain(name))

  const vat = group(item, "inregistrare_scop_Tva")
  const vatRegistered = flag(vat.scpTVA)
  const periods = (Array.isArray(vat.perioade_TVA) ? vat.perioade_TVA : []).filter(isObject)
  const starts = periods.map((p) => anafDate(p.data_inceput_ScpTVA))
  const openStarts = periods.filter((p) => anafDate(p.data_sfarsit_ScpTVA) === null).map((p) => anafDate(p.data_inceput_ScpTVA))
  const ends = periods.map((p) => anafDate(p.data_sfarsit_ScpTVA))

  const cash = group(item, "inregistrare_RTVAI")
  const cashVat = flag(cash.statusTvaIncasare)

  return {
    cui,
    inactive: fact(inactive, inactive ? anafDate(inactivity.dataInactivare) : anafDate(inactivity.dataReactivare)),
    struck_off: fact(struckOff, struckOff ? struckOnDate ?? (struckOffByState ? stateDate(state) : null) : null),
    insolvency: fact(insolvent, insolventByState ? stateDate(state) : null),
    vat_registered: fact(vatRegistered, vatRegistered ? latest(openStarts) ?? latest(starts) : latest(ends)),
    cash_vat: fact(cashVat, cashVat ? anafDate(cash.dataInceputTvaInc) : anafDate(cash.dataSfarsitTvaInc))
  }
}

/** The `notFound` list, whatever the case of its key, as CUIs. */
const notFoundOf = (body: Fields): Set<string> => {
  const key = Object.keys(body).find((k) => k.toLowerCase() === "notfound")
  const list = key === undefined ? [] : body[key]
  const cuis = new Set<string>()
  for (const entry of Array.isArray(list) ? list : []) {
    const cui = anafCui(isObject(entry) ? entry.cui : entry)
    if (cui !== undefined) cuis.add(cui)
  }
  return cuis
}

/**
 * The whole answer, or why it is not one: a body that is not an object, a
 * `cod` other than 200, or a `found` that is not a list.
 */
export const parseAnafAnswer = (body: unknown): RegistryAnswer | { readonly problem: string } => {
  if (!isObject(body)) return { problem: "the answer is not a JSON object" }
  if (body.cod !== undefined && body.cod !== 200 && body.cod !== "200") {
    return { problem: `the answer says cod ${text(body.cod)}: ${text(body.message)}` }
  }
  const found = body.found ?? []
  if (!Array.isArray(found)) return { problem: "`found` is not a list" }
  const statuses = new Map<string, FiscalStatus>()
  for (const item of found) {
    const status = anafStatus(item)
    if (status !== undefined) statuses.set(status.cui, status)
  }
  return { found: statuses, notFound: notFoundOf(body) }
}
