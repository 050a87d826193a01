import { describe, expect, it } from "vitest"
import { anafDate, anafStatus, parseAnafAnswer } from "../../src/fiscal/anaf.ts"

/** A found item of ANAF PlatitorTvaRest v9, every group as the service sends it (values invented). */
const item = (overrides: {
  general?: Record<string, unknown>
  vat?: Record<string, unknown>
  cash?: Record<string, unknown>
  inactive?: Record<string, unknown>
} = {}) => ({
  date_generale: {
    cui: 14399840,
    data: "2026-05-14",
    denumire: "EXEMPLU DISTRIBUTIE SRL",
    adresa: "JUD. CLUJ, MUN. CLUJ-NAPOCA, STR. EXEMPLU, NR.3",
    nrRegCom: "J12/345/2012",
    telefon: "",
    fax: "",
    codPostal: "400000",
    act: "",
    stare_inregistrare: "INREGISTRAT din data 14.02.2012",
    data_inregistrare: "2012-02-14",
    cod_CAEN: "4690",
    iban: "",
    statusRO_e_Factura: true,
    data_inreg_Reg_RO_e_Factura: "01.01.2024",
    organFiscalCompetent: "Administraţia Judeţeană a Finanţelor Publice Cluj",
    forma_de_proprietate: "PROPR.PRIVATA-CAPITAL PRIVAT AUTOHTON",
    forma_organizare: "PERSOANA JURIDICA",
    forma_juridica: "SOCIETATE COMERCIALĂ CU RĂSPUNDERE LIMITATĂ",
    ...overrides.general
  },
  inregistrare_scop_Tva: {
    scpTVA: true,
    perioade_TVA: [
      { data_inceput_ScpTVA: "2021-01-13", data_sfarsit_ScpTVA: "", data_anul_imp_ScpTVA: "", mesaj_ScpTVA: "" },
      {
        data_inceput_ScpTVA: "2017-10-01",
        data_sfarsit_ScpTVA: "2020-12-02",
        data_anul_imp_ScpTVA: "2020-12-29",
        mesaj_ScpTVA: "Anularea înregistrarii în scopuri de TVA a fost efectuata din oficiu"
      }
    ],
    ...overrides.vat
  },
  inregistrare_RTVAI: {
    dataInceputTvaInc: "",
    dataSfarsitTvaInc: "",
    dataActualizareTvaInc: "",
    dataPublicareTvaInc: "",
    tipActTvaInc: "",
    statusTvaIncasare: false,
    ...overrides.cash
  },
  stare_inactiv: {
    dataInactivare: "2020-12-02",
    dataReactivare: "2020-12-18",
    dataPublicare: "2020-12-11",
    dataRadiere: "",
    statusInactivi: false,
    ...overrides.inactive
  },
  inregistrare_SplitTVA: { dataInceputSplitTVA: "", dataAnulareSplitTVA: "", statusSplitTVA: false },
  adresa_sediu_social: { sdenumire_Strada: "Str. Exemplu", snumar_Strada: "3", scod_Postal: "400000" },
  adresa_domiciliu_fiscal: { ddenumire_Strada: "Str. Exemplu", dnumar_Strada: "3", dcod_Postal: "400000" }
})

describe("reading ANAF v9 answers", () => {
  it("reads a registered, active VAT payer with its dates", () => {
    expect(anafStatus(item())).toEqual({
      cui: "14399840",
      inactive: { status: false, effective_date: "2020-12-18" },
      struck_off: { status: false, effective_date: null },
      insolvency: { status: false, effective_date: null },
      vat_registered: { status: true, effective_date: "2021-01-13" },
      cash_vat: { status: false, effective_date: null }
    })
  })

  it("reads inactivity, deregistration from VAT and cash-basis VAT with their published dates", () => {
    const status = anafStatus(item({
      inactive: { statusInactivi: true, dataInactivare: "2026-05-10", dataReactivare: "" },
      vat: {
        scpTVA: false,
        perioade_TVA: [
          { data_inceput_ScpTVA: "2021-01-13", data_sfarsit_ScpTVA: "2026-05-11" },
          { data_inceput_ScpTVA: "2017-10-01", data_sfarsit_ScpTVA: "2020-12-02" }
        ]
      },
      cash: { statusTvaIncasare: true, dataInceputTvaInc: "2026-05-01" }
    }))
    expect(status).toMatchObject({
      inactive: { status: true, effective_date: "2026-05-10" },
      vat_registered: { status: false, effective_date: "2026-05-11" },
      cash_vat: { status: true, effective_date: "2026-05-01" }
    })
    expect(anafStatus(item({ cash: { statusTvaIncasare: false, dataInceputTvaInc: "2025-01-01", dataSfarsitTvaInc: "2026-04-30" } })))
      .toMatchObject({ cash_vat: { status: false, effective_date: "2026-04-30" } })
  })

  it("reads a company struck off by its registration state, or by the deregistration date alone", () => {
    expect(anafStatus(item({ general: { stare_inregistrare: "RADIERE din data 12.03.2026" } }))?.struck_off)
      .toEqual({ status: true, effective_date: "2026-03-12" })
    expect(anafStatus(item({ inactive: { dataRadiere: "2026-03-12" } }))?.struck_off)
      .toEqual({ status: true, effective_date: "2026-03-12" })
    expect(anafStatus(item({ general: { stare_inregistrare: "DIZOLVARE din data 02.04.2026" } }))?.struck_off)
      .toEqual({ status: true, effective_date: "2026-04-02" })
  })

  it("reads insolvency from the registration state (with its date) or from the name (without one)", () => {
    expect(anafStatus(item({ general: { stare_inregistrare: "INSOLVENŢĂ din data 03.05.2026" } }))?.insolvency)
      .toEqual({ status: true, effective_date: "2026-05-03" })
    expect(anafStatus(item({ general: { denumire: "EXEMPLU DISTRIBUTIE SRL - ÎN INSOLVENŢĂ" } }))?.insolvency)
      .toEqual({ status: true, effective_date: null })
    expect(anafStatus(item({ general: { denumire: "EXEMPLU SRL IN FALIMENT" } }))?.insolvency.status).toBe(true)
    expect(anafStatus(item({ general: { denumire: "SOLVENT EXEMPLU SRL" } }))?.insolvency.status).toBe(false)
  })

  it("takes blanks, the DD.MM.YYYY spelling and impossible dates the way they mean", () => {
    expect(anafDate(" ")).toBeNull()
    expect(anafDate("")).toBeNull()
    expect(anafDate(null)).toBeNull()
    expect(anafDate("12.03.2019")).toBe("2019-03-12")
    expect(anafDate("2019-02-30")).toBeNull()
    expect(anafDate("0000-01-01")).toBeNull()
    expect(anafDate("9999-12-31")).toBe("9999-12-31")
    expect(anafDate(20190312)).toBeNull()
  })

  it("reads notFound in either spelling, and refuses what is not an answer", () => {
    for (const key of ["notFound", "notfound", "NOTFOUND"]) {
      const answer = parseAnafAnswer({ cod: 200, message: "SUCCESS", found: [item()], [key]: [1859, "RO18547290"] })
      expect("problem" in answer).toBe(false)
      if ("problem" in answer) return
      expect([...answer.found.keys()]).toEqual(["14399840"])
      expect([...answer.notFound].sort()).toEqual(["18547290", "1859"])
    }
    expect(parseAnafAnswer({ cod: 200, message: "SUCCESS", found: [] })).toEqual({ found: new Map(), notFound: new Set() })
    expect(parseAnafAnswer({ cod: 500, message: "Eroare" })).toEqual({ problem: "the answer says cod 500: Eroare" })
    expect(parseAnafAnswer([])).toEqual({ problem: "the answer is not a JSON object" })
    expect(parseAnafAnswer({ cod: 200, found: "none" })).toEqual({ problem: "`found` is not a list" })
    // An item without a CUI tells nothing about any contact.
    const answer = parseAnafAnswer({ cod: 200, found: [{ date_generale: { denumire: "X" } }, null] })
    expect("found" in answer && answer.found.size).toBe(0)
  })
})
