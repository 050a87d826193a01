import { describe, expect, it } from "vitest"
import { matchIntent, normalize, type Period, type Topic } from "../../src/display/pulse/intents.ts"

/**
 * The phrasings the pulse answers: Romanian with proper diacritics (ș ț),
 * with the legacy cedilla forms (ş ţ), without diacritics, and English. Each
 * maps to one topic and, for figures over a period, its period.
 */
const phrasings: ReadonlyArray<readonly [string, Topic, Period | null]> = [
  // Collected
  ["cât am încasat luna asta?", "collected", "month"],
  ["cat am incasat luna asta", "collected", "month"],
  ["Cât am încasat azi?", "collected", "today"],
  ["cat am incasat astazi", "collected", "today"],
  ["Câți bani au intrat săptămâna aceasta?", "collected", "week"],
  ["cati bani au intrat saptamana asta", "collected", "week"],
  ["Încasări luna trecută", "collected", "last_month"],
  ["incasarile din luna precedenta", "collected", "last_month"],
  ["Cât am încasat?", "collected", "month"],
  ["Cât ne-au plătit clienții azi?", "collected", "today"],
  ["How much did we collect this month?", "collected", "month"],
  ["how much cash came in today", "collected", "today"],
  ["How much have we received this week?", "collected", "week"],
  ["What did we collect last month?", "collected", "last_month"],
  ["money received", "collected", "month"],
  // Invoiced
  ["Cât am facturat luna asta?", "invoiced", "month"],
  ["cat am facturat luna aceasta", "invoiced", "month"],
  ["Câte facturi am emis azi?", "invoiced", "today"],
  ["cate facturi am emis saptamana asta", "invoiced", "week"],
  ["Vânzări luna trecută", "invoiced", "last_month"],
  ["vanzarile de luna trecuta", "invoiced", "last_month"],
  ["Ce cifră de afaceri avem luna aceasta?", "invoiced", "month"],
  ["What is our revenue this month?", "invoiced", "month"],
  ["How much did we invoice today?", "invoiced", "today"],
  ["How much have we billed this week?", "invoiced", "week"],
  ["sales last month", "invoiced", "last_month"],
  ["How much have we sold today?", "invoiced", "today"],
  // Overdue invoices
  ["how many invoices are overdue?", "invoices_overdue", null],
  ["How many overdue invoices do we have?", "invoices_overdue", null],
  ["Which invoices are past due?", "invoices_overdue", null],
  ["Câte facturi sunt restante?", "invoices_overdue", null],
  ["cate facturi sunt restante", "invoices_overdue", null],
  ["Facturi întârziate", "invoices_overdue", null],
  ["facturi cu scadența depășită", "invoices_overdue", null],
  ["Ce restanțe avem?", "invoices_overdue", null],
  ["Ce restanţe avem?", "invoices_overdue", null],
  // Open balance
  ["Care este soldul de încasat?", "open_balance", null],
  ["care e soldul clientilor", "open_balance", null],
  ["Cât mai avem de încasat?", "open_balance", null],
  ["cat mai avem de incasat", "open_balance", null],
  ["Cât ne datorează clienții?", "open_balance", null],
  ["What is our open balance?", "open_balance", null],
  ["How much is outstanding?", "open_balance", null],
  ["How much do customers owe us?", "open_balance", null],
  ["unpaid invoices total", "open_balance", null],
  // Expenses
  ["Cât am cheltuit luna asta?", "expenses", "month"],
  ["cat am cheltuit luna asta", "expenses", "month"],
  ["Cheltuieli luna trecută", "expenses", "last_month"],
  ["cheltuielile de azi", "expenses", "today"],
  ["What are our expenses this month?", "expenses", "month"],
  ["How much did we spend this week?", "expenses", "week"],
  // Obligations
  ["Câte obligații avem deschise?", "obligations_open", null],
  ["cate obligatii sunt deschise", "obligations_open", null],
  ["Ce obligaţii contractuale avem?", "obligations_open", null],
  ["How many open obligations do we have?", "obligations_open", null],
  ["Ce obligații sunt restante?", "obligations_overdue", null],
  ["obligatii intarziate", "obligations_overdue", null],
  ["Which obligations are overdue?", "obligations_overdue", null],
  ["Ce termene contractuale am ratat? Sunt depășite?", "obligations_overdue", null],
  ["Ce obligații sunt scadente săptămâna aceasta?", "obligations_due_week", null],
  ["obligatii scadente saptamana asta", "obligations_due_week", null],
  ["Which obligations are due this week?", "obligations_due_week", null],
  ["contract deadlines this week", "obligations_due_week", null],
  // Routes
  ["Câte rute avem azi?", "routes_today", null],
  ["cate rute avem astazi", "routes_today", null],
  ["Ce livrări sunt programate azi?", "routes_today", null],
  ["How many routes today?", "routes_today", null],
  ["How many deliveries are scheduled today?", "routes_today", null],
  ["Câte rute sunt în desfășurare?", "routes_in_progress", null],
  ["Câte rute sunt în desfăşurare?", "routes_in_progress", null],
  ["cate curse sunt pe drum", "routes_in_progress", null],
  ["Which routes are in progress?", "routes_in_progress", null],
  ["How many routes are on the road right now?", "routes_in_progress", null],
  ["Câte rute s-au finalizat azi?", "routes_completed_today", null],
  ["cate rute au fost terminate azi", "routes_completed_today", null],
  ["How many routes were completed today?", "routes_completed_today", null],
  ["routes finished today", "routes_completed_today", null],
  ["Câte vehicule active avem?", "vehicles_active", null],
  ["cate masini sunt active in flota", "vehicles_active", null],
  ["Câte mașini avem în flotă?", "vehicles_active", null],
  ["How many vehicles are active?", "vehicles_active", null],
  ["How big is the fleet?", "vehicles_active", null]
]

describe("the pulse's intents", () => {
  it(`maps ${phrasings.length} phrasings (Romanian with and without diacritics, English) to their intents`, () => {
    expect(phrasings.length).toBeGreaterThanOrEqual(60)
    const wrong = phrasings
      .map(([text, topic, period]) => ({ text, expected: { topic, period }, got: matchIntent(text) }))
      .filter((r) => r.got?.topic !== r.expected.topic || r.got?.period !== r.expected.period)
    expect(wrong).toEqual([])
  })

  it("covers every topic and every period", () => {
    expect(new Set(phrasings.map(([, t]) => t)).size).toBe(12)
    expect(new Set(phrasings.map(([, , p]) => p).filter((p) => p !== null))).toEqual(
      new Set(["today", "week", "month", "last_month"])
    )
  })

  it("folds ș/ş, ț/ţ, ă, â and î, case and punctuation alike", () => {
    expect(normalize("Câți bani AU intrat? Ș/Ş ț/ţ ă â î")).toBe(" cati bani au intrat s s t t a a i ")
    for (const [a, b] of [["încasări", "incasari"], ["restanţe", "restanțe"], ["ŞTIRI", "știri"]] as const) {
      expect(normalize(a)).toBe(normalize(b))
    }
  })

  it("places nothing it cannot answer", () => {
    for (const text of ["", "   ", "what's the weather like?", "cine a câștigat meciul?", "azil", "💶💶💶", "hello"]) {
      expect(matchIntent(text), text).toBeUndefined()
    }
  })
})
