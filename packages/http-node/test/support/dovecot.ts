import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { freePort } from "./ports.ts"
import { ImapFlow } from "imapflow"
import { receiverCertificateFile } from "./receiver.ts"

const DOVECOT = "/usr/sbin/dovecot"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's one Dovecot, started by the global setup (`startDovecot`). */
    dovecot: DovecotServer
  }
}

/**
 * A real Dovecot (Debian's dovecot-imapd, installed by scripts/ensure-dovecot.sh
 * from the root `npm test`) on loopback ports, with its own configuration,
 * users and mail in a temporary directory — never the system service. One
 * serves the whole run; each test works as users of its own.
 * Plain IMAP with STARTTLS on `port`, implicit TLS on `tlsPort`, both with
 * the test certificate for 127.0.0.1 (`receiverCertificateFile`).
 * Junk, Drafts, Sent, Trash and Archive carry their special-use attributes.
 */
export interface DovecotServer {
  readonly host: string
  readonly port: number
  readonly tlsPort: number
  /** One password file per user (`addUser` writes them). */
  readonly usersDir: string
}

/** The run's Dovecot as a test uses it. */
export interface Dovecot extends DovecotServer {
  /** Adds a user, who can sign in at once. Names must be unique in the run: every test file shares the server. */
  readonly addUser: (user: string, password: string) => void
  /** A signed-in client of `user`, for a test to put messages in place as a mail server or another client would. */
  readonly connect: (user: string) => Promise<ImapFlow>
}

const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** Who the Dovecot processes and the mail files run as: its own system users as root, this user otherwise. */
const identities = () => {
  if (process.getuid?.() === 0) {
    return { internalUser: "dovecot", internalGroup: "dovecot", loginUser: "dovenull", mailUser: "dovecot", mailGroup: "dovecot" }
  }
  const user = os.userInfo().username
  const group = execFileSync("id", ["-gn"], { encoding: "utf8" }).trim()
  return { internalUser: user, internalGroup: group, loginUser: user, mailUser: user, mailGroup: group }
}

export const startDovecot = async (): Promise<{ readonly server: DovecotServer; readonly stop: () => Promise<void> }> => {
  if (!fs.existsSync(DOVECOT)) {
    throw new Error(`${DOVECOT} is missing: run \`bash scripts/ensure-dovecot.sh\` (the root \`npm test\` runs it)`)
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-dovecot-"))
  fs.chmodSync(dir, 0o755)
  const who = identities()
  const mailDir = path.join(dir, "mail")
  fs.mkdirSync(mailDir)
  if (process.getuid?.() === 0) execFileSync("chown", [`${who.mailUser}:${who.mailGroup}`, mailDir])
  // One password file per user: Dovecot caches a passwd-file until its mtime changes, which a second user
  // added within the same second would not change.
  const usersDir = path.join(dir, "users")
  fs.mkdirSync(usersDir)
  fs.chmodSync(usersDir, 0o755)
  const tlsDir = path.dirname(receiverCertificateFile)
  const [port, tlsPort] = [await freePort(), await freePort()]
  const special = (name: string, use: string, auto: boolean) =>
    `  mailbox ${name} {\n    special_use = \\${use}\n    auto = ${auto ? "create" : "no"}\n  }\n`
  fs.writeFileSync(
    path.join(dir, "dovecot.conf"),
    `protocols = imap
listen = 127.0.0.1
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
ssl = yes
ssl_cert = <${path.join(tlsDir, "receiver-cert.pem")}
ssl_key = <${path.join(tlsDir, "receiver-key.pem")}
ssl_min_protocol = TLSv1.2
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
mail_location = maildir:${mailDir}/%u
default_internal_user = ${who.internalUser}
default_internal_group = ${who.internalGroup}
default_login_user = ${who.loginUser}
first_valid_uid = 1
first_valid_gid = 1
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${usersDir}/%u
}
userdb {
  driver = static
  args = uid=${who.mailUser} gid=${who.mailGroup} home=${mailDir}/%u
}
# Tests sign in with wrong passwords on purpose: no growing delay for this address afterwards.
# No chroot: a user other than root may not, and these services serve only the test's loopback.
service anvil {
  chroot =
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = ${tlsPort}
    ssl = yes
  }
}
namespace inbox {
  inbox = yes
  separator = /
${special("Junk", "Junk", true)}${special("Drafts", "Drafts", true)}${special("Sent", "Sent", true)}${special("Trash", "Trash", true)}${
      special("Archive", "Archive", false)
    }}
`
  )
  const child: ChildProcess = spawn(DOVECOT, ["-F", "-c", path.join(dir, "dovecot.conf")], { stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  // A test process that ends without stopping it (a crash, a timeout) takes its Dovecot along.
  const orphanGuard = () => child.kill("SIGKILL")
  process.once("exit", orphanGuard)
  const log = () => {
    const file = path.join(dir, "dovecot.log")
    return output + (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "")
  }
  const deadline = Date.now() + 20_000
  while (!((await accepts(port)) && (await accepts(tlsPort)))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`Dovecot did not start on 127.0.0.1:${port}/${tlsPort}:\n${log()}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    server: { host: "127.0.0.1", port, tlsPort, usersDir },
    stop: async () => {
      process.removeListener("exit", orphanGuard)
      child.kill("SIGTERM")
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))])
      if (child.exitCode === null) child.kill("SIGKILL")
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** The run's Dovecot for one test file: users it adds and clients it opens. */
export const dovecotFor = (server: DovecotServer): Dovecot => {
  const passwords = new Map<string, string>()
  return {
    ...server,
    addUser: (user, password) => {
      passwords.set(user, password)
      fs.writeFileSync(path.join(server.usersDir, user), `${user}:{PLAIN}${password}::::::\n`, { mode: 0o644 })
    },
    connect: async (user) => {
      const client = new ImapFlow({
        host: server.host,
        port: server.port,
        secure: false,
        doSTARTTLS: false,
        auth: { user, pass: passwords.get(user) ?? "" },
        logger: false,
        disableAutoIdle: true
      })
      client.on("error", () => undefined)
      await client.connect()
      return client
    }
  }
}

export interface RawMessage {
  readonly from: string
  readonly to: string
  readonly cc?: string | undefined
  readonly bcc?: string | undefined
  readonly subject: string
  /** Without angle brackets; none for a message that has no Message-ID. */
  readonly messageId?: string | undefined
  readonly deliveredTo?: string | undefined
  readonly body?: string | undefined
  /** A file attached under this name. */
  readonly attachment?: string | undefined
}

/** An RFC 5322 message, CRLF-terminated, as a mail server would store it. */
export const rawMessage = (m: RawMessage): string => {
  const headers = [
    ...(m.deliveredTo === undefined ? [] : [`Delivered-To: ${m.deliveredTo}`]),
    `From: ${m.from}`,
    `To: ${m.to}`,
    ...(m.cc === undefined ? [] : [`Cc: ${m.cc}`]),
    ...(m.bcc === undefined ? [] : [`Bcc: ${m.bcc}`]),
    `Subject: ${m.subject}`,
    ...(m.messageId === undefined ? [] : [`Message-ID: <${m.messageId}>`]),
    "Date: Mon, 2 Mar 2026 09:00:00 +0200",
    "MIME-Version: 1.0"
  ]
  const body = m.body ?? "Hello, this is the body."
  if (m.attachment === undefined) {
    return [...headers, "Content-Type: text/plain; charset=utf-8", "", body, ""].join("\r\n")
  }
  return [
    ...headers,
    "Content-Type: multipart/mixed; boundary=\"b1\"",
    "",
    "--b1",
    "Content-Type: text/plain; charset=utf-8",
    "",
    body,
    "--b1",
    `Content-Type: application/pdf; name="${m.attachment}"`,
    `Content-Disposition: attachment; filename="${m.attachment}"`,
    "Content-Transfer-Encoding: base64",
    "",
    "JVBERi0xLjQKJcfsj6IK",
    "--b1--",
    ""
  ].join("\r\n")
}
