import { Duration, Effect, Layer } from "effect"
import { MailRules, MailSource, WebhookDestinations } from "@opsplatform/core"
import { type FetchMessageObject, type FetchQueryObject, ImapFlow, type MessageStructureObject } from "imapflow"
import * as dns from "node:dns"
import * as tls from "node:tls"

export interface ImapOptions {
  /** Loopback and private addresses allowed (`OPSPLATFORM_MAIL_ALLOW_PRIVATE`); otherwise every resolved address must be public. */
  readonly allowPrivate: boolean
  /** A PEM certificate to trust besides the system's (`OPSPLATFORM_MAIL_CA_FILE`), for servers with a private CA. */
  readonly extraCa?: string | undefined
  /** How long one whole session (sign-in to sign-out) may take. */
  readonly sessionTimeoutMs?: number | undefined
}

const DAY_MS = 24 * 60 * 60 * 1000

/** Only these headers are requested besides the envelope: they say which address received the message. */
const DELIVERY_HEADERS = ["delivered-to", "x-original-to"]

/** Everything the sync reads of a message: never a body part. */
export const MESSAGE_QUERY = {
  uid: true,
  flags: true,
  envelope: true,
  internalDate: true,
  size: true,
  bodyStructure: true,
  headers: DELIVERY_HEADERS
} as const satisfies FetchQueryObject

const failure = (reason: string) => new MailSource.MailSourceError({ reason })

/**
 * What went wrong, in words that name no secret (imapflow's errors carry codes
 * and the server's answer). A refused connection, a timeout, a failed TLS
 * handshake and a server that does not speak IMAP read the same, so a
 * mailbox's `last_error` cannot tell an open port of some host from a closed
 * one (decided: docs/decisions.md, "Limits and ranges"); only an IMAP server
 * that refused the sign-in is named, as the member must fix the credential.
 */
const describe = (host: string, port: number) => (error: unknown): MailSource.MailSourceError => {
  const e = error as { code?: string; authenticationFailed?: boolean; responseText?: string; message?: string }
  if (e?.authenticationFailed) return failure("The IMAP server refused the sign-in")
  if (e?.code === "ENOTFOUND") return failure(`${host} does not resolve`)
  return failure(`Could not connect to ${host}:${port} as an IMAP server`)
}

/** A command that failed once signed in: the server is an IMAP server the member reached, so its answer is told. */
const describeCommand = (host: string, port: number) => (error: unknown): MailSource.MailSourceError => {
  const e = error as { responseText?: string; message?: string }
  return failure(`IMAP error with ${host}:${port}: ${e?.responseText ?? e?.message ?? String(error)}`.slice(0, 500))
}

/**
 * The address to connect to: the literal itself, or what the name resolves
 * to — refused when any answer is loopback or private and the operator did
 * not allow that. The socket goes to the address checked (no DNS rebinding).
 */
const resolveHost = (host: string, allowPrivate: boolean): Effect.Effect<string, MailSource.MailSourceError> => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  const refused = (address: string) =>
    failure(`${host} resolves to ${address}, a loopback, private, link-local or multicast address`)
  if (WebhookDestinations.isIpLiteral(bare)) {
    return allowPrivate || WebhookDestinations.isPublicAddress(bare) ? Effect.succeed(bare) : Effect.fail(refused(bare))
  }
  return Effect.tryPromise({
    try: () => dns.promises.lookup(bare, { all: true }),
    catch: () => failure(`${host} does not resolve`)
  }).pipe(
    Effect.flatMap((answers) => {
      const blocked = allowPrivate ? undefined : answers.find((a) => !WebhookDestinations.isPublicAddress(a.address))
      if (blocked !== undefined) return Effect.fail(refused(blocked.address))
      const first = answers[0]
      return first === undefined ? Effect.fail(failure(`${host} does not resolve`)) : Effect.succeed(first.address)
    })
  )
}

/**
 * RFC 5322 §2.1.1: a line of a message is at most 998 characters. A field with
 * a longer line, or one unfolded past that, breaks the rule and is skipped
 * before anything reads it (cutting it could leave part of an address), so
 * what a sender writes into a header costs the sync bounded work; a delivery
 * address is at most 254 characters, well inside.
 */
export const MAX_HEADER_LINE = 998

/** The header fields of `text`, unfolded (a line starting with a space or tab continues the field above); `undefined` for one over MAX_HEADER_LINE. */
const headerFields = (text: string): Array<string | undefined> => {
  const fields: Array<string | undefined> = []
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    const folded = (line.startsWith(" ") || line.startsWith("\t")) && fields.length > 0
    if (line.length > MAX_HEADER_LINE) {
      if (folded) fields[fields.length - 1] = undefined
      else fields.push(undefined)
    } else if (folded) {
      const above = fields[fields.length - 1]
      const joined = above === undefined ? undefined : `${above} ${line.replace(/^[\t ]+/, "")}`
      fields[fields.length - 1] = joined === undefined || joined.length > MAX_HEADER_LINE ? undefined : joined
    } else fields.push(line)
  }
  return fields
}

/** The addresses of the delivery headers, unfolded, in the order they appear. */
export const deliveryAddresses = (headers: Buffer | undefined): ReadonlyArray<string> => {
  if (headers === undefined) return []
  const out: Array<string> = []
  for (const field of headerFields(headers.toString("utf8"))) {
    if (field === undefined) continue
    const colon = field.indexOf(":")
    if (colon < 0 || !DELIVERY_HEADERS.includes(field.slice(0, colon).trim().toLowerCase())) continue
    // Starts only where a run of address characters starts, so a run without `@` is read once, not once per position.
    const address = /(?<![^\s",:;<>])[^\s",:;<>]+@[^\s",;<>]+/.exec(field.slice(colon + 1))
    if (address !== null) out.push(address[0])
  }
  return out
}

const toBodyPart = (node: MessageStructureObject): MailRules.BodyPart => ({
  type: node.type.toLowerCase(),
  disposition: node.disposition,
  filename: node.dispositionParameters?.filename ?? node.parameters?.name,
  childNodes: node.childNodes?.map(toBodyPart)
})

const iso = (value: Date | string | undefined): string | null => {
  if (value === undefined) return null
  const date = value instanceof Date ? value : new Date(value)
  return Number.isNaN(date.getTime()) ? null : date.toISOString()
}

export const toRemoteMessage = (m: FetchMessageObject): MailSource.RemoteMessage => ({
  uid: m.uid,
  // A message without a usable INTERNALDATE cannot be shown to be recent, so it never qualifies.
  internalDate: iso(m.internalDate) ?? new Date(0).toISOString(),
  sizeBytes: typeof m.size === "number" ? m.size : null,
  flags: [...(m.flags ?? [])],
  messageId: MailRules.normalizeMessageId(m.envelope?.messageId),
  from: m.envelope?.from?.find((a) => a.address)?.address ?? null,
  subject: m.envelope?.subject ?? "",
  dateHeader: iso(m.envelope?.date),
  deliveredTo: deliveryAddresses(m.headers),
  addressedTo: [...(m.envelope?.to ?? []), ...(m.envelope?.cc ?? [])].flatMap((a) => (a.address ? [a.address] : [])),
  hasAttachments: m.bodyStructure === undefined ? false : MailRules.hasAttachments(toBodyPart(m.bodyStructure))
})

/**
 * The MailSource over IMAP, on imapflow (docs/decisions.md, Mail): one
 * connection per sync, every folder opened read-only (EXAMINE), and only the
 * envelope, flags, INTERNALDATE, RFC822.SIZE, BODYSTRUCTURE and two delivery
 * headers fetched — never a body part.
 */
export const ImapMailSource = (options: ImapOptions): Layer.Layer<MailSource.MailSource> =>
  Layer.succeed(
    MailSource.MailSource,
    MailSource.MailSource.of({
      session: <A, E, R>(
        connection: MailSource.MailConnection,
        use: (session: MailSource.MailSession) => Effect.Effect<A, E, R>
      ): Effect.Effect<A, E | MailSource.MailSourceError, R> => {
        const explain = describeCommand(connection.host, connection.port)
        const attempt = <A>(run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: explain })
        const acquire = Effect.gen(function*() {
          const address = yield* resolveHost(connection.host, options.allowPrivate)
          const bare = connection.host.replace(/^\[|\]$/g, "")
          const client = new ImapFlow({
            host: address,
            port: connection.port,
            secure: connection.tls === "implicit",
            doSTARTTLS: connection.tls === "starttls" ? true : connection.tls === "none" ? false : undefined,
            ...(WebhookDestinations.isIpLiteral(bare) ? {} : { servername: bare }),
            tls: {
              minVersion: "TLSv1.2",
              ...(options.extraCa === undefined ? {} : { ca: [...tls.rootCertificates, options.extraCa] })
            },
            auth: connection.credential.kind === "password"
              ? { user: connection.username, pass: connection.credential.secret }
              : { user: connection.username, accessToken: connection.credential.secret },
            logger: false,
            disableAutoIdle: true,
            disableCompression: true,
            connectionTimeout: 30_000,
            greetingTimeout: 16_000,
            socketTimeout: 120_000
          })
          // Failures reach the pending command; an error event nobody listens to would end the process.
          client.on("error", () => undefined)
          yield* Effect.tryPromise({ try: () => client.connect(), catch: describe(connection.host, connection.port) }).pipe(
            Effect.onError(() => Effect.sync(() => client.close()))
          )
          return client
        })
        const release = (client: ImapFlow) =>
          Effect.promise(() => client.logout().catch(() => client.close())).pipe(Effect.timeout("5 seconds"), Effect.ignore)

        const open = (client: ImapFlow, path: string) =>
          client.mailbox !== false && client.mailbox.path === path
            ? Effect.succeed(client.mailbox)
            : attempt(() => client.mailboxOpen(path, { readOnly: true }))

        const session = (client: ImapFlow): MailSource.MailSession => ({
          folders: attempt(() => client.list()).pipe(
            Effect.map((list) =>
              list
                .filter((f) => !f.flags.has("\\Noselect") && !f.flags.has("\\NonExistent"))
                .map((f) => ({ path: f.path, specialUse: f.specialUse ?? null }))
            )
          ),
          status: (path) =>
            Effect.map(open(client, path), (mailbox) => ({
              uidValidity: mailbox.uidValidity.toString(),
              // A server that predicts no UIDNEXT gives no floor; the UIDs read are then the only high-water mark.
              uidNext: Number.isSafeInteger(mailbox.uidNext) ? mailbox.uidNext : 0
            })),
          messages: (path, query) =>
            Effect.gen(function*() {
              const mailbox = yield* open(client, path)
              const found = yield* attempt(() =>
                client.search(
                  query._tag === "AfterUid"
                    ? { uid: `${query.uid + 1}:*` }
                    // SEARCH SINCE counts whole days in the server's zone: a day earlier, the sync reads the exact instants.
                    : { since: new Date(query.epochMs - DAY_MS) },
                  { uid: true }
                )
              )
              const uids = (found === false || found === undefined ? [] : found)
                .filter((uid) => query._tag !== "AfterUid" || uid > query.uid)
                .sort((a, b) => a - b)
              const chosen = query._tag === "AfterUid" ? uids.slice(0, query.limit) : uids.slice(-query.limit)
              const fetched = chosen.length === 0 ? [] : yield* attempt(() =>
                client.fetchAll(chosen.join(","), MESSAGE_QUERY, { uid: true })
              )
              return {
                uidValidity: mailbox.uidValidity.toString(),
                messages: fetched.map(toRemoteMessage).sort((a, b) => a.uid - b.uid)
              }
            })
        })

        return Effect.acquireUseRelease(acquire, (client) => use(session(client)), release).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(options.sessionTimeoutMs ?? 5 * 60_000),
            orElse: () => Effect.fail(failure(`The IMAP session with ${connection.host} took too long`))
          }),
          // The server, never the account: a span names no mailbox user.
          Effect.withSpan("imap.session", {
            kind: "client",
            attributes: { "server.address": connection.host, "server.port": connection.port }
          })
        )
      }
    })
  )
