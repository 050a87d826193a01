import type { AssistantAnswer, Kpi } from "../model.ts"
import type { Series } from "./figures.ts"
import { counted, formatLei, type Locale } from "./format.ts"
import type { Intent, Period, Topic } from "./intents.ts"

/**
 * The answer to a question: a sentence in the locale with its figure, and the
 * KPI the display draws. Pure: the figures come in already computed.
 */

type Tone = Kpi["tone"]

const periodWords: Record<Locale, Record<Period, string>> = {
  ro: { today: "azi", week: "săptămâna aceasta", month: "luna aceasta", last_month: "luna trecută" },
  en: { today: "today", week: "this week", month: "this month", last_month: "last month" }
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

const nouns = {
  invoice: { ro: { one: "factură", many: "facturi" }, en: { one: "invoice", many: "invoices" } },
  payment: { ro: { one: "plată", many: "plăți" }, en: { one: "payment", many: "payments" } },
  expense: { ro: { one: "cheltuială", many: "cheltuieli" }, en: { one: "expense", many: "expenses" } },
  obligation: { ro: { one: "obligație", many: "obligații" }, en: { one: "obligation", many: "obligations" } },
  route: { ro: { one: "rută", many: "rute" }, en: { one: "route", many: "routes" } },
  vehicle: { ro: { one: "vehicul", many: "vehicule" }, en: { one: "vehicle", many: "vehicles" } }
} as const

const n = (count: number, locale: Locale, noun: keyof typeof nouns) => counted(count, locale, nouns[noun][locale])

/** The KPI's label in each locale, for a topic and (flow topics) its period. */
const labels: Record<Topic, (locale: Locale, period: string) => string> = {
  invoiced: (l, p) => (l === "ro" ? `Facturat ${p}` : `Invoiced ${p}`),
  collected: (l, p) => (l === "ro" ? `Încasat ${p}` : `Collected ${p}`),
  expenses: (l, p) => (l === "ro" ? `Cheltuieli ${p}` : `Expenses ${p}`),
  invoices_overdue: (l) => (l === "ro" ? "Facturi restante" : "Overdue invoices"),
  open_balance: (l) => (l === "ro" ? "Sold de încasat" : "Open balance"),
  obligations_open: (l) => (l === "ro" ? "Obligații deschise" : "Open obligations"),
  obligations_overdue: (l) => (l === "ro" ? "Obligații restante" : "Overdue obligations"),
  obligations_due_week: (l) => (l === "ro" ? "Obligații scadente săptămâna aceasta" : "Obligations due this week"),
  routes_today: (l) => (l === "ro" ? "Rute azi" : "Routes today"),
  routes_in_progress: (l) => (l === "ro" ? "Rute în desfășurare" : "Routes in progress"),
  routes_completed_today: (l) => (l === "ro" ? "Rute finalizate azi" : "Routes completed today"),
  vehicles_active: (l) => (l === "ro" ? "Vehicule active" : "Active vehicles")
}

interface Figure {
  /** RON minor units (money topics) or 0. */
  readonly value: number
  readonly count: number
  readonly spark: ReadonlyArray<number>
  readonly unit: Kpi["unit"]
  readonly unconverted: number
}

/** The tone of a figure (docs/decisions.md, "Wall displays": the tone set and its rules). */
export const toneOf = (intent: Intent, f: Figure): Tone => {
  const delta = f.spark[f.spark.length - 1]! - f.spark[f.spark.length - 2]!
  switch (intent.topic) {
    case "invoiced":
    case "collected":
      // A period still running is not yet behind; a finished one that fell short is.
      return delta > 0 ? "positive" : delta < 0 && intent.period === "last_month" ? "negative" : "neutral"
    case "expenses":
      return delta > 0 ? "warning" : "neutral"
    case "invoices_overdue":
      return f.count === 0 ? "positive" : delta > 0 ? "negative" : "warning"
    case "obligations_overdue":
      return f.count === 0 ? "positive" : "negative"
    case "obligations_due_week":
      return f.count === 0 ? "positive" : "warning"
    case "routes_completed_today":
      return f.count > 0 ? "positive" : "neutral"
    case "open_balance":
    case "obligations_open":
    case "routes_today":
    case "routes_in_progress":
    case "vehicles_active":
      return "neutral"
  }
}

const sentence = (intent: Intent, f: Figure, locale: Locale): string => {
  const lei = formatLei(f.value, locale)
  const p = periodWords[locale][intent.period ?? "month"]
  const ro = locale === "ro"
  switch (intent.topic) {
    case "invoiced":
      return ro
        ? `${capitalize(p)} ați facturat ${lei} (${n(f.count, locale, "invoice")}).`
        : `You invoiced ${lei} ${p} (${n(f.count, locale, "invoice")}).`
    case "collected":
      return ro
        ? `${capitalize(p)} ați încasat ${lei} din ${n(f.count, locale, "payment")}.`
        : `You collected ${lei} ${p} from ${n(f.count, locale, "payment")}.`
    case "expenses": {
      const main = ro
        ? `${capitalize(p)} aveți cheltuieli de ${lei} (${n(f.count, locale, "expense")}).`
        : `Expenses ${p}: ${lei} (${n(f.count, locale, "expense")}).`
      if (f.unconverted === 0) return main
      return ro
        ? `${main} ${capitalize(n(f.unconverted, locale, "expense"))} în alte valute nu ${
          f.unconverted === 1 ? "este inclusă" : "sunt incluse"
        }.`
        : `${main} ${capitalize(n(f.unconverted, locale, "expense"))} in other currencies ${
          f.unconverted === 1 ? "is" : "are"
        } not included.`
    }
    case "invoices_overdue":
      if (f.count === 0) return ro ? "Nu aveți facturi restante." : "No invoices are overdue."
      return ro
        ? `Aveți ${n(f.count, locale, "invoice")} ${f.count === 1 ? "restantă" : "restante"}, în valoare de ${lei}.`
        : `${capitalize(n(f.count, locale, "invoice"))} ${f.count === 1 ? "is" : "are"} overdue, totalling ${lei}.`
    case "open_balance":
      return ro
        ? `Soldul de încasat este ${lei}, din ${n(f.count, locale, "invoice")} ${f.count === 1 ? "neachitată" : "neachitate"}.`
        : `The open balance is ${lei} across ${n(f.count, locale, "invoice")} not yet paid.`
    case "obligations_open":
      return ro
        ? `Aveți ${n(f.count, locale, "obligation")} ${f.count === 1 ? "deschisă" : "deschise"}.`
        : `You have ${n(f.count, locale, "obligation")} open.`
    case "obligations_overdue":
      if (f.count === 0) return ro ? "Nu aveți obligații restante." : "No obligations are overdue."
      return ro
        ? `Aveți ${n(f.count, locale, "obligation")} ${f.count === 1 ? "restantă" : "restante"}.`
        : `${capitalize(n(f.count, locale, "obligation"))} ${f.count === 1 ? "is" : "are"} overdue.`
    case "obligations_due_week":
      return ro
        ? `Săptămâna aceasta mai aveți de îndeplinit ${n(f.count, locale, "obligation")}.`
        : `${capitalize(n(f.count, locale, "obligation"))} ${f.count === 1 ? "is" : "are"} still due this week.`
    case "routes_today":
      return ro ? `Azi sunt programate ${n(f.count, locale, "route")}.` : `${capitalize(n(f.count, locale, "route"))} scheduled today.`
    case "routes_in_progress":
      return ro
        ? `Acum sunt în desfășurare ${n(f.count, locale, "route")}.`
        : `${capitalize(n(f.count, locale, "route"))} ${f.count === 1 ? "is" : "are"} in progress now.`
    case "routes_completed_today":
      return ro
        ? `Azi s-au finalizat ${n(f.count, locale, "route")}.`
        : `${capitalize(n(f.count, locale, "route"))} completed today.`
    case "vehicles_active":
      return ro
        ? `Aveți ${n(f.count, locale, "vehicle")} ${f.count === 1 ? "activ" : "active"} în flotă.`
        : `${capitalize(n(f.count, locale, "vehicle"))} ${f.count === 1 ? "is" : "are"} active in the fleet.`
  }
}

/** The KPI id of an intent: the topic, and for a flow topic its period (`collected_month`). */
export const kpiId = (intent: Intent): string => (intent.period === null ? intent.topic : `${intent.topic}_${intent.period}`)

/** The reporting currency of every money figure (amounts that mix currencies are read in RON: docs/decisions.md, "Design: shared by the areas"). */
export const REPORTING_CURRENCY = "RON"

/**
 * The answer and KPI for an intent, from its series: a flow (`flow` true)
 * reports its last period, a state the sum of its periods. `countApart` is a
 * count read by its own query (obligations due this week).
 */
export const answerOf = (
  transcript: string,
  intent: Intent,
  series: Series,
  flow: boolean,
  locale: Locale,
  countApart?: number
): AssistantAnswer => {
  const money = moneyTopics.has(intent.topic)
  const last = series.counts.length - 1
  const spark = money ? series.money : series.counts
  const total = (values: ReadonlyArray<number>) => (flow ? values[last]! : values.reduce((a, b) => a + b, 0))
  const figure: Figure = {
    value: money ? total(series.money) : 0,
    count: countApart ?? total(series.counts),
    spark,
    unit: money ? "money" : "count",
    unconverted: total(series.unconverted)
  }
  const id = kpiId(intent)
  return {
    transcript,
    answer: sentence(intent, figure, locale),
    kpi: {
      id,
      labelKey: `pulse.${id}`,
      label: labels[intent.topic](locale, periodWords[locale][intent.period ?? "month"]),
      value: { minor: figure.value, currency: REPORTING_CURRENCY },
      count: figure.count,
      delta: spark[last]! - spark[last - 1]!,
      spark,
      tone: toneOf(intent, figure),
      unit: figure.unit
    }
  }
}

const moneyTopics: ReadonlySet<Topic> = new Set(["invoiced", "collected", "expenses", "invoices_overdue", "open_balance"])

/** The answer to a question the pulse cannot place: what it can answer, and no KPI. */
export const helpAnswer = (transcript: string, locale: Locale): AssistantAnswer => ({
  transcript,
  answer: locale === "ro"
    ? "Nu am înțeles întrebarea. Pot răspunde despre: cât ați facturat și cât ați încasat (azi, săptămâna aceasta, " +
      "luna aceasta, luna trecută), facturile restante, soldul de încasat, cheltuielile, obligațiile (deschise, " +
      "restante, scadente săptămâna aceasta), rutele (azi, în desfășurare, finalizate azi) și vehiculele active din flotă."
    : "I did not understand the question. I can answer about: how much you invoiced and collected (today, this week, " +
      "this month, last month), overdue invoices, the open balance, expenses, obligations (open, overdue, due this " +
      "week), routes (today, in progress, completed today) and the active vehicles of the fleet.",
  kpi: null
})
