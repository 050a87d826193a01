import { Schema, Struct } from "effect"
import { Filters } from "../shared/filters.ts"
import { isMaxChars, IsoDate, IsoDateTime, isPattern, NonBlankString, Uuid } from "../shared/schemas.ts"

export const ContactId = Uuid.pipe(Schema.brand("ContactId"))
export type ContactId = typeof ContactId.Type

/** Whom the organization sells to, buys from, or both. */
export const ContactKind = Schema.Literals(["customer", "supplier", "both"])
export type ContactKind = typeof ContactKind.Type

/** ISO 3166-1 alpha-2, upper case. */
export const CountryCode = Schema.String.check(
  isPattern(/^[A-Z]{2}$/, { message: "must be an ISO 3166-1 alpha-2 country code, e.g. RO" })
).annotate({ examples: ["RO", "DE"] })

/** One fact the tax authority publishes about a company: whether it holds, and since when where a date is published. */
export const FiscalFact = Schema.Struct({
  status: Schema.Boolean,
  effective_date: Schema.NullOr(IsoDate)
}).annotate({ identifier: "FiscalFact" })
export type FiscalFact = typeof FiscalFact.Type

/**
 * What the tax authority's registry said about a contact's CUI at a check (the
 * fiscal area's snapshot; decided: docs/decisions.md, "Fiscal status").
 */
export const FiscalStatus = Schema.Struct({
  cui: Schema.String.annotate({ description: "The CUI the registry was asked about" }),
  inactive: FiscalFact.annotate({ description: "Declared inactive (registry of inactive taxpayers)" }),
  struck_off: FiscalFact.annotate({ description: "Struck off or dissolved" }),
  insolvency: FiscalFact.annotate({ description: "In insolvency, judicial reorganisation or bankruptcy" }),
  vat_registered: FiscalFact.annotate({ description: "Registered for VAT purposes (art. 316 of the Fiscal Code)" }),
  cash_vat: FiscalFact.annotate({ description: "Applies VAT on collection (cash-basis VAT)" })
}).annotate({ identifier: "FiscalStatus" })
export type FiscalStatus = typeof FiscalStatus.Type

const Optional = (max: number) => Schema.NullOr(Schema.String.check(isMaxChars(max)))

export const Contact = Schema.Struct({
  id: ContactId,
  name: NonBlankString(200),
  kind: ContactKind,
  country: CountryCode.annotate({ description: "Where the contact is registered (default RO)" }),
  vat_number: Optional(30).annotate({
    description: "Romanian CUI/CIF without the RO prefix (checked with its control digit), or a foreign VAT number as given"
  }),
  registration_number: Optional(40).annotate({ description: "Trade registry number, e.g. J40/1234/2020" }),
  address: Optional(500),
  email: Schema.NullOr(
    Schema.String.check(isMaxChars(254), isPattern(/^[^\s@]+@[^\s@]+$/, { message: "must be an email address" }))
  ),
  phone: Optional(40),
  fiscal_status: Schema.NullOr(FiscalStatus).annotate({
    description: "The last status the tax authority published for the contact's CUI; null before the first daily check"
  }),
  fiscal_checked_at: Schema.NullOr(IsoDateTime).annotate({ description: "When the tax authority last answered about the contact" }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "Contact" })
export type Contact = typeof Contact.Type

const Editable = Contact.mapFields(
  Struct.pick(["name", "kind", "country", "vat_number", "registration_number", "address", "email", "phone"])
)

/** Name and kind are required; the country defaults to RO and the rest to none. */
export const ContactCreate = Editable.mapFields(Struct.mapOmit(["name", "kind"], Schema.optionalKey)).annotate({
  identifier: "ContactCreate"
})
export type ContactCreate = typeof ContactCreate.Type

export const ContactUpdate = Editable.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "ContactUpdate" })
export type ContactUpdate = typeof ContactUpdate.Type

export const ContactFilter = Schema.Struct({
  kind: Schema.optionalKey(ContactKind),
  vat_number: Schema.optionalKey(Schema.String.check(isMaxChars(40)).annotate({
    description: "A VAT number, written any way (\"RO 14399840\" finds 14399840)"
  })),
  q: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), isMaxChars(200)).annotate({
    description: "Part of the name, any case"
  }).pipe(Filters.contains("name")))
})
export type ContactFilter = typeof ContactFilter.Type
