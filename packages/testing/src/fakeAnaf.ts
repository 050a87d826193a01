import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * The Romanian tax authority's VAT payer service (ANAF `PlatitorTvaRest` v9)
 * on loopback, answering in its real wire format, for tests and demos: a
 * registry of taxpayers the test edits (flip one to inactive, strike one
 * off…), `notFound` for CUIs it does not hold, and failures on demand. It
 * accepts what ANAF accepts (`POST /api/PlatitorTvaRest/v9/tva` with a JSON
 * list of at most 100 `{ cui, data }`) and records when each request arrived.
 * Node only.
 */

/** One taxpayer as the registry holds it, in ANAF's field names. Dates are YYYY-MM-DD, "" for none. */
export interface FakeTaxpayer {
  readonly denumire: string
  readonly stare_inregistrare: string
  readonly statusInactivi: boolean
  readonly dataInactivare: string
  readonly dataReactivare: string
  readonly dataRadiere: string
  readonly scpTVA: boolean
  readonly perioade_TVA: ReadonlyArray<{ readonly data_inceput_ScpTVA: string; readonly data_sfarsit_ScpTVA: string }>
  readonly statusTvaIncasare: boolean
  readonly dataInceputTvaInc: string
  readonly dataSfarsitTvaInc: string
}

/** An active VAT payer since 2015, not on cash-basis VAT: what most customers look like. */
export const activeTaxpayer = (name = "CLIENT SRL"): FakeTaxpayer => ({
  denumire: name,
  stare_inregistrare: "INREGISTRAT din data 25.02.2015",
  statusInactivi: false,
  dataInactivare: "",
  dataReactivare: "",
  dataRadiere: "",
  scpTVA: true,
  perioade_TVA: [{ data_inceput_ScpTVA: "2015-03-01", data_sfarsit_ScpTVA: "" }],
  statusTvaIncasare: false,
  dataInceputTvaInc: "",
  dataSfarsitTvaInc: ""
})

export interface FakeAnafRequest {
  /** `Date.now()` when the request arrived. */
  readonly at: number
  readonly body: ReadonlyArray<{ readonly cui: unknown; readonly data: unknown }>
  /** The status the fake answered with. */
  readonly status: number
}

export interface FakeAnaf {
  /** Base address, as `OPSPLATFORM_ANAF_URL` takes it. */
  readonly url: string
  /** Adds a taxpayer or changes fields of one (the rest stay as they were, or as `activeTaxpayer`). */
  readonly set: (cui: string | number, fields?: Partial<FakeTaxpayer>) => void
  /** Removes a taxpayer: its CUI is answered in `notFound`. */
  readonly remove: (cui: string | number) => void
  /** Every request received, in order. */
  readonly requests: ReadonlyArray<FakeAnafRequest>
  /** The next `times` requests get this HTTP status and ANAF's error body (e.g. 503). */
  failNext: (status: number, times?: number) => void
  /** Wait this long before answering each request. */
  delayMs: number
  /** The key of the not-found list: `notFound` (v9) or `notfound` (older versions). */
  notFoundKey: "notFound" | "notfound"
  readonly close: () => Promise<void>
}

/** A found item exactly as v9 nests it, with the groups and fields ANAF always sends. */
export const anafItem = (cui: number, date: string, t: FakeTaxpayer) => ({
  date_generale: {
    cui,
    data: date,
    denumire: t.denumire,
    adresa: "MUNICIPIUL BUCUREŞTI, SECTOR 1, STR. EXEMPLU, NR.1",
    nrRegCom: "J40/1234/2015",
    telefon: "",
    fax: "",
    codPostal: "010101",
    act: "",
    stare_inregistrare: t.stare_inregistrare,
    data_inregistrare: "2015-02-25",
    cod_CAEN: "6201",
    iban: "",
    statusRO_e_Factura: true,
    data_inreg_Reg_RO_e_Factura: "01.01.2024",
    organFiscalCompetent: "Administraţia Sector 1 a Finanţelor Publice",
    forma_de_proprietate: "PROPR.PRIVATA-CAPITAL PRIVAT AUTOHTON",
    forma_organizare: "PERSOANA JURIDICA",
    forma_juridica: "SOCIETATE COMERCIALĂ CU RĂSPUNDERE LIMITATĂ"
  },
  inregistrare_scop_Tva: {
    scpTVA: t.scpTVA,
    perioade_TVA: t.perioade_TVA.map((p) => ({ ...p, data_anul_imp_ScpTVA: p.data_sfarsit_ScpTVA, mesaj_ScpTVA: "" }))
  },
  inregistrare_RTVAI: {
    dataInceputTvaInc: t.dataInceputTvaInc,
    dataSfarsitTvaInc: t.dataSfarsitTvaInc,
    dataActualizareTvaInc: "",
    dataPublicareTvaInc: "",
    tipActTvaInc: "",
    statusTvaIncasare: t.statusTvaIncasare
  },
  stare_inactiv: {
    dataInactivare: t.dataInactivare,
    dataReactivare: t.dataReactivare,
    dataPublicare: "",
    dataRadiere: t.dataRadiere,
    statusInactivi: t.statusInactivi
  },
  inregistrare_SplitTVA: { dataInceputSplitTVA: "", dataAnulareSplitTVA: "", statusSplitTVA: false },
  adresa_sediu_social: {
    sdenumire_Strada: "Str. Exemplu",
    snumar_Strada: "1",
    sdenumire_Localitate: "Sector 1 Mun. Bucureşti",
    scod_Localitate: "1",
    sdenumire_Judet: "MUNICIPIUL BUCUREŞTI",
    scod_Judet: "40",
    scod_JudetAuto: "B",
    stara: "",
    sdetalii_Adresa: "",
    scod_Postal: "010101"
  },
  adresa_domiciliu_fiscal: {
    ddenumire_Strada: "Str. Exemplu",
    dnumar_Strada: "1",
    ddenumire_Localitate: "Sector 1 Mun. Bucureşti",
    dcod_Localitate: "1",
    ddenumire_Judet: "MUNICIPIUL BUCUREŞTI",
    dcod_Judet: "40",
    dcod_JudetAuto: "B",
    dtara: "",
    ddetalii_Adresa: "",
    dcod_Postal: "010101"
  }
})

export const ANAF_PATH = "/api/PlatitorTvaRest/v9/tva"

export const startFakeAnaf = async (): Promise<FakeAnaf> => {
  const taxpayers = new Map<number, FakeTaxpayer>()
  const requests: Array<FakeAnafRequest> = []
  const failures: Array<number> = []
  const timers = new Set<NodeJS.Timeout>()
  const key = (cui: string | number) => Number(String(cui).replace(/^RO/i, ""))

  const server = createServer((req, res) => {
    const at = Date.now()
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const reply = (status: number, body: unknown, entries: FakeAnafRequest["body"] = []) => {
        requests.push({ at, body: entries, status })
        const send = () => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
        if (fake.delayMs <= 0) send()
        else {
          const timer = setTimeout(() => {
            timers.delete(timer)
            if (!res.destroyed) send()
          }, fake.delayMs)
          timers.add(timer)
        }
      }
      if (req.method !== "POST" || req.url !== ANAF_PATH) return reply(404, { cod: 404, message: "Not found" })
      let body: unknown
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        return reply(400, { cod: 400, message: "Request invalid" })
      }
      if (!Array.isArray(body)) return reply(400, { cod: 400, message: "Request invalid" })
      const entries = body as FakeAnafRequest["body"]
      const failure = failures.shift()
      if (failure !== undefined) return reply(failure, { cod: failure, message: "Serviciul nu este disponibil" }, entries)
      if (entries.length > 100) return reply(400, { cod: 400, message: "Numarul maxim de CUI-uri este 100" }, entries)
      const found: Array<unknown> = []
      const notFound: Array<number> = []
      for (const entry of entries) {
        const cui = Number(entry.cui)
        const taxpayer = taxpayers.get(cui)
        if (taxpayer === undefined) notFound.push(cui)
        else found.push(anafItem(cui, String(entry.data), taxpayer))
      }
      reply(200, { cod: 200, message: "SUCCESS", found, [fake.notFoundKey]: notFound }, entries)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const fake: FakeAnaf = {
    url: `http://127.0.0.1:${port}`,
    set: (cui, fields = {}) => void taxpayers.set(key(cui), { ...(taxpayers.get(key(cui)) ?? activeTaxpayer()), ...fields }),
    remove: (cui) => void taxpayers.delete(key(cui)),
    requests,
    failNext: (status, times = 1) => {
      for (let i = 0; i < times; i++) failures.push(status)
    },
    delayMs: 0,
    notFoundKey: "notFound",
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t)
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  return fake
}
