import { Schema, Struct } from "effect"
import { isMaxChars, IsoDate, IsoDateTime, NonBlankString, Uuid } from "../shared/schemas.ts"
import { caseNumberIssue, normalizeCaseNumber } from "./rules.ts"

export const CourtCaseId = Uuid.pipe(Schema.brand("CourtCaseId"))
export type CourtCaseId = typeof CourtCaseId.Type
export const HearingId = Uuid.pipe(Schema.brand("HearingId"))
export type HearingId = typeof HearingId.Type

/** Where the case stands for the organization; any status may follow any other (decided: docs/decisions.md). */
export const CourtCaseStatus = Schema.Literals(["open", "suspended", "closed"])
export type CourtCaseStatus = typeof CourtCaseStatus.Type

/** A file number as stored, e.g. `1234/3/2026` (rules.ts `normalizeCaseNumber`). */
export const CaseNumber = Schema.String.annotate({
  description: "Romanian court file number <number>/<court code>/<year>",
  examples: ["1234/3/2026"]
})

/** A file number as a caller writes it: spaces ignored, the `a` of an associated file in either case. */
export const CaseNumberInput = Schema.String.annotate({
  description: "Romanian court file number <number>/<court code>/<year>, optionally with * or /a<n>",
  examples: ["1234/3/2026"]
}).check(
  Schema.isMaxLength(40),
  Schema.makeFilter((s: string) => normalizeCaseNumber(s) !== undefined || caseNumberIssue)
)

const Text = (max: number) => Schema.NullOr(Schema.String.check(isMaxChars(max)))

export const Party = Schema.Struct({
  name: NonBlankString(200),
  role: NonBlankString(100).annotate({ description: "The party's standing, e.g. reclamant, pârât, intervenient" })
}).annotate({ identifier: "CourtCaseParty" })
export type Party = typeof Party.Type

export const CourtCase = Schema.Struct({
  id: CourtCaseId,
  number: CaseNumber,
  court: NonBlankString(200).annotate({ description: "The court hearing the case, e.g. Tribunalul București" }),
  subject: Text(500).annotate({ description: "What the case is about (obiectul dosarului)" }),
  parties: Schema.Array(Party).check(Schema.isMaxLength(50)),
  panel: Text(100).annotate({ description: "The panel (complet) judging it" }),
  status: CourtCaseStatus,
  notes: Text(5000),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "CourtCase" })
export type CourtCase = typeof CourtCase.Type

const CaseEditable = CourtCase.mapFields(Struct.pick(["number", "court", "subject", "parties", "panel", "status", "notes"]))
  .mapFields(Struct.assign({ number: CaseNumberInput }))

/** The number and court are required; no parties, subject, panel or notes, and status `open`, by default. */
export const CourtCaseCreate = CaseEditable.mapFields(Struct.mapOmit(["number", "court"], Schema.optionalKey)).annotate({
  identifier: "CourtCaseCreate"
})
export type CourtCaseCreate = typeof CourtCaseCreate.Type

export const CourtCaseUpdate = CaseEditable.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "CourtCaseUpdate" })
export type CourtCaseUpdate = typeof CourtCaseUpdate.Type

export const Hearing = Schema.Struct({
  id: HearingId,
  case_id: CourtCaseId,
  hearing_date: IsoDate,
  court: NonBlankString(200).annotate({ description: "Where it is held; the case's court unless given" }),
  panel: Text(100),
  solution: Text(2000).annotate({ description: "What the court decided at the hearing (soluția), e.g. amână cauza" }),
  notes: Text(5000),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "CourtHearing" })
export type Hearing = typeof Hearing.Type

const HearingEditable = Hearing.mapFields(Struct.pick(["hearing_date", "court", "panel", "solution", "notes"]))

/** The date is required; the court defaults to the case's. */
export const HearingCreate = HearingEditable.mapFields(Struct.mapOmit(["hearing_date"], Schema.optionalKey)).annotate({
  identifier: "CourtHearingCreate"
})
export type HearingCreate = typeof HearingCreate.Type

export const HearingUpdate = HearingEditable.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "CourtHearingUpdate" })
export type HearingUpdate = typeof HearingUpdate.Type

export const CourtCaseFilter = Schema.Struct({ status: Schema.optionalKey(CourtCaseStatus) })
export type CourtCaseFilter = typeof CourtCaseFilter.Type
