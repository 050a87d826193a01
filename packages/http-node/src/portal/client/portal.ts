/**
 * The portal's only script, bundled at build time (scripts/bundle-pages.mjs)
 * and loaded with the page's nonce. Every page works without it; it adds:
 * a confirmation before an action that cannot be undone (without it the
 * server asks on a page of its own), copy buttons for secrets, and a delivery
 * log that refreshes itself while deliveries are in flight.
 */

const MAX_REFRESHES = 60
const REFRESH_MS = 2000

const confirmForms = () => {
  for (const form of document.querySelectorAll<HTMLFormElement>("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm ?? "")) {
        event.preventDefault()
        return
      }
      const confirmed = document.createElement("input")
      confirmed.type = "hidden"
      confirmed.name = "confirmed"
      confirmed.value = "yes"
      form.append(confirmed)
    })
  }
}

const copyButtons = () => {
  for (const button of document.querySelectorAll<HTMLButtonElement>("button[data-copy]")) {
    const target = document.getElementById(button.dataset.copy ?? "")
    if (target === null || navigator.clipboard === undefined) continue
    button.hidden = false
    const label = button.textContent ?? ""
    button.addEventListener("click", () => {
      void navigator.clipboard.writeText(target.textContent ?? "").then(() => {
        button.textContent = button.dataset.copied ?? label
        setTimeout(() => (button.textContent = label), 2000)
      })
    })
  }
}

/** Replaces the delivery log with a fresh copy of it while it says deliveries are in flight. */
const refreshLog = (round: number) => {
  const log = document.getElementById("log")
  const source = log?.dataset.refresh
  if (log === null || source === undefined || round >= MAX_REFRESHES) return
  setTimeout(() => {
    fetch(source, { credentials: "same-origin", headers: { accept: "text/html" } })
      .then((response) => (response.ok ? response.text() : Promise.reject(new Error(String(response.status)))))
      .then((text) => {
        const fresh = new DOMParser().parseFromString(text, "text/html").getElementById("log")
        const current = document.getElementById("log")
        if (fresh === null || current === null) return
        // Keep the reader's place: a control inside the log that had focus is focused again.
        const focused = document.activeElement?.id
        current.replaceWith(fresh)
        if (focused) document.getElementById(focused)?.focus()
        refreshLog(round + 1)
      })
      .catch(() => undefined)
  }, REFRESH_MS)
}

confirmForms()
copyButtons()
refreshLog(0)
export {}
