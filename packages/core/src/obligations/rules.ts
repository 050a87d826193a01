import { isDateInRange } from "../shared/limits.ts"
import { transitionTable } from "../shared/transitions.ts"
import { type NoticeKind, type ObligationBucket, ObligationStatus, type Recurrence } from "./model.ts"

export type { NoticeKind }

/** The lifecycle of an obligation. Completed obligations can be reopened; cancelled is final. */
export const obligationLifecycle = transitionTable(ObligationStatus.literals, {
  complete: { from: ["pending"], to: "completed" },
  reopen: { from: ["completed"], to: "pending" },
  cancel: { from: ["pending"], to: "cancelled" }
})
export type ObligationAction = keyof typeof obligationLifecycle.rules

/** Where an obligation may go from each status. */
export const obligationTransitions = obligationLifecycle.moves

/** Staying in the same status is not a move: completing a completed obligation is refused. */
export const canTransition = obligationLifecycle.can

/** The status each lifecycle action leads to. */
export const actionTarget: { readonly [A in ObligationAction]: ObligationStatus } = {
  complete: obligationLifecycle.rules.complete.to,
  reopen: obligationLifecycle.rules.reopen.to,
  cancel: obligationLifecycle.rules.cancel.to
}

// --- calendar dates (YYYY-MM-DD), computed on day numbers so no local clock or offset leaks in ---

const parts = (date: string): readonly [number, number, number] => [
  Number(date.slice(0, 4)),
  Number(date.slice(5, 7)),
  Number(date.slice(8, 10))
]

const format = (year: number, month: number, day: number): string =>
  `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`

export const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

export const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
const dayNumber = (date: string): number => {
  const [y0, m, d] = parts(date)
  const y = m <= 2 ? y0 - 1 : y0
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

const fromDayNumber = (n: number): string => {
  const z = n + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  return format(yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export const daysBetween = (from: string, to: string): number => dayNumber(to) - dayNumber(from)

export const addDays = (date: string, days: number): string => fromDayNumber(dayNumber(date) + days)

/** "Today" for an organization: the calendar date at an instant in its time zone (shared with every area). */
export { localDate } from "../shared/time.ts"

// --- recurrence ---

export const recurrenceMonths: Readonly<Record<Exclude<Recurrence, "none">, number>> = {
  monthly: 1,
  quarterly: 3,
  yearly: 12
}

/** The anchor day of a series: the day of month of the date it was set from. */
export const anchorDayOf = (dueDate: string): number => parts(dueDate)[2]

/**
 * The due date `months` months after `dueDate`, on the series' anchor day, or
 * on the month's last day when the month is shorter. Because the anchor is
 * kept, a series started on the 31st returns to the 31st after a short month:
 * Jan 31 → Feb 29 (2028) → Mar 31.
 */
export const addMonthsAnchored = (dueDate: string, months: number, anchorDay: number): string => {
  const [y, m] = parts(dueDate)
  const index = y * 12 + (m - 1) + months
  const year = Math.floor(index / 12)
  const month = (index % 12) + 1
  return format(year, month, Math.min(anchorDay, daysInMonth(year, month)))
}

/**
 * The next due date of a recurring obligation, or undefined when it does not
 * recur — or when the next one would fall after DATE_MAX: a series ends at the
 * end of the date range rather than making a date no field can hold
 * (decided: docs/decisions.md, "Limits and ranges").
 */
export const nextDueDate = (dueDate: string, recurrence: Recurrence, anchorDay: number): string | undefined => {
  if (recurrence === "none") return undefined
  const next = addMonthsAnchored(dueDate, recurrenceMonths[recurrence], anchorDay)
  return isDateInRange(next) ? next : undefined
}

// --- buckets and notices ---

/** The first day of the reminder window: `remind_days_before` days before the due date. */
export const reminderDate = (dueDate: string, remindDaysBefore: number): string => addDays(dueDate, -remindDaysBefore)

/**
 * Where an obligation stands on `today` (the organization's date):
 * - `done`: completed or cancelled, nothing left to do;
 * - `overdue`: pending and the due date has passed;
 * - `due_soon`: pending, inside the reminder window (from `remind_days_before` days before the due date to the due date itself);
 * - `upcoming`: pending, before the reminder window.
 * Dates compare as `YYYY-MM-DD` strings, which order like the dates.
 */
export const deriveBucket = (
  o: { readonly status: ObligationStatus; readonly due_date: string; readonly remind_days_before: number },
  today: string
): ObligationBucket => {
  if (o.status !== "pending") return "done"
  if (o.due_date < today) return "overdue"
  if (reminderDate(o.due_date, o.remind_days_before) <= today) return "due_soon"
  return "upcoming"
}

/** Evidence exists when a document is linked or a note is written. */
export const hasEvidence = (o: { readonly evidence_document_id: string | null; readonly evidence_note: string | null }): boolean =>
  o.evidence_document_id !== null || (o.evidence_note !== null && o.evidence_note.trim() !== "")

/**
 * Which notices a pending obligation is due on `today`, before looking at what
 * was already sent: a reminder inside the reminder window, an overdue notice
 * once the due date has passed, an escalation once it has been overdue for the
 * organization's escalation delay (at least one day: escalation never precedes
 * the overdue notice).
 */
export const noticesDue = (
  o: { readonly status: ObligationStatus; readonly due_date: string; readonly remind_days_before: number },
  today: string,
  escalationDelayDays: number
): ReadonlyArray<NoticeKind> => {
  const bucket = deriveBucket(o, today)
  if (bucket === "due_soon") return ["reminder"]
  if (bucket !== "overdue") return []
  return daysBetween(o.due_date, today) >= escalationDelayDays ? ["overdue", "escalation"] : ["overdue"]
}
