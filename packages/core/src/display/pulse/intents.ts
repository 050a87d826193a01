/**
 * What a question asks, read from its words: pure keyword matching over the
 * text with diacritics folded (ș/ş → s, ț/ţ → t, ă/â → a, î → i), so a
 * display's speech recognizer, a keyboard without Romanian letters and an
 * English speaker all land on the same intents. No network, no model.
 * The phrasings it is held to are the table in `test/display/intents.test.ts`.
 */

export const topics = [
  "invoiced",
  "collected",
  "invoices_overdue",
  "open_balance",
  "expenses",
  "obligations_open",
  "obligations_overdue",
  "obligations_due_week",
  "routes_today",
  "routes_in_progress",
  "routes_completed_today",
  "vehicles_active"
] as const
export type Topic = (typeof topics)[number]

/** The periods a flow figure can be asked for, in the organization's time zone. */
export const periods = ["today", "week", "month", "last_month"] as const
export type Period = (typeof periods)[number]


export interface Intent {
  readonly topic: Topic
  /** The period of a flow topic (this month when the question names none); null for a state. */
  readonly period: Period | null
}

/** Lower case, diacritics and punctuation gone, single spaces, padded: " cat am incasat luna asta ". */
export const normalize = (text: string): string =>
  ` ${
    text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim()
  } `

/**
 * A cue is a word start: "incas" matches "incasat", "incasari"; a cue with a
 * space is a phrase whose last word may go on ("luna trec" matches "luna
 * trecuta"). A cue ending in "$" must end its word ("azi$" is not "azil").
 */
const has = (normalized: string, cues: ReadonlyArray<string>): boolean =>
  cues.some((cue) =>
    cue.endsWith("$") ? normalized.includes(` ${cue.slice(0, -1)} `) : normalized.includes(` ${cue}`)
  )

const cues = {
  vehicles: [
    "vehicul",
    "autovehicul",
    "masin",
    "autoutilitar",
    "camion",
    "duba",
    "dube",
    "flot",
    "vehicle",
    "fleet",
    "truck",
    "van$",
    "vans$",
    "lorr"
  ],
  obligations: ["obligati", "obligation", "termen", "deadline", "contract"],
  routes: ["ruta", "rute", "route", "traseu", "trasee", "cursa", "curse", "livrar", "deliver", "tura", "ture"],
  overdue: [
    "restant",
    "intarzi",
    "depasit",
    "expirat",
    "overdue",
    "past due",
    "late$",
    "missed",
    "scadenta depasita"
  ],
  inProgress: [
    "in desfasurare",
    "in curs$",
    "in derulare",
    "pe drum",
    "pe traseu",
    "in progress",
    "on the road",
    "underway",
    "under way",
    "ongoing",
    "running",
    "active",
    "activ"
  ],
  completed: ["finaliz", "terminat", "complet", "incheiat", "gata$", "finished", "done$", "closed"],
  dueSoon: ["saptaman", "week", "scadent", "due$", "due this", "coming up", "upcoming", "urmeaza"],
  openBalance: [
    // Romanian "sold" (balance) comes with an article or a complement; a bare "sold" is English.
    "soldu",
    "sold de",
    "sold deschis",
    "sold total",
    "de incasat",
    "neincasat",
    "nu am incasat",
    "neachitat",
    "neplatit",
    "outstanding",
    "open balance",
    "balance",
    "receivable",
    "owed",
    "owe us",
    "unpaid",
    "ne datoreaz",
    "ne datoreaza",
    "datoreaz",
    "datorii"
  ],
  expenses: ["cheltu", "expense", "spent", "spend", "spending", "costs$", "costuri", "plati catre furnizori"],
  collected: [
    "incas",
    "collect",
    "received",
    "came in",
    "come in",
    "cash",
    "got paid",
    "been paid",
    "payments in",
    "am primit",
    "bani intrat",
    "banii intrat",
    "au intrat",
    "a intrat",
    "plati primite",
    "ne au platit",
    "ne-au platit"
  ],
  invoiced: [
    "factur",
    "invoic",
    "billed",
    "billing",
    "bill$",
    "vandut",
    "vanzari",
    "vanzare",
    "sales",
    "sold$",
    "revenue",
    "venit",
    "cifra de afaceri",
    "turnover",
    "emis",
    "emise"
  ],
  today: ["azi$", "astazi", "today", "ziua de azi", "ziua de astazi", "ziua asta", "so far today"],
  week: ["saptaman", "this week", "week"],
  lastMonth: [
    "luna trecut",
    "luna precedent",
    "luna anterioar",
    "luna dinainte",
    "last month",
    "previous month",
    "past month",
    "month before"
  ],
  month: ["luna", "this month", "month"]
} as const

const periodOf = (n: string): Period =>
  has(n, cues.lastMonth) ? "last_month" : has(n, cues.today) ? "today" : has(n, cues.week) ? "week" : "month"

/** The intent of a question, or undefined when it names nothing the pulse can answer. */
export const matchIntent = (text: string): Intent | undefined => {
  const n = normalize(text)
  const state = (topic: Topic): Intent => ({ topic, period: null })
  if (has(n, cues.obligations)) {
    if (has(n, cues.overdue)) return state("obligations_overdue")
    if (has(n, cues.dueSoon)) return state("obligations_due_week")
    return state("obligations_open")
  }
  if (has(n, cues.vehicles) && !has(n, cues.routes)) return state("vehicles_active")
  if (has(n, cues.routes)) {
    if (has(n, cues.inProgress)) return state("routes_in_progress")
    if (has(n, cues.completed)) return state("routes_completed_today")
    return state("routes_today")
  }
  if (has(n, cues.overdue)) return state("invoices_overdue")
  // "De încasat" (still to collect) is a balance; checked before "încasat" (collected).
  if (has(n, cues.openBalance)) return state("open_balance")
  if (has(n, cues.expenses)) return { topic: "expenses", period: periodOf(n) }
  if (has(n, cues.collected)) return { topic: "collected", period: periodOf(n) }
  if (has(n, cues.invoiced)) return { topic: "invoiced", period: periodOf(n) }
  return undefined
}
