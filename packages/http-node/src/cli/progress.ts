import { Effect } from "effect"

/**
 * A progress bar for long CLI work (migrations, imports). It draws on stderr,
 * and only when stderr is a terminal: stdout stays the command's JSON, and a
 * log file or a pipe gets no control characters. Each update rewrites one
 * line; `done` ends it with a newline. See docs/decisions.md, "Client,
 * examples and packaging".
 */
export interface Progress {
  /** `n` more units done (default 1); `label` names what is being worked on now. */
  readonly advance: (n?: number, label?: string) => Effect.Effect<void>
  /** Finishes the line (the bar shows what was done, even when it is less than the total). */
  readonly done: Effect.Effect<void>
}

/** Where the bar draws: a stream that knows whether it is a terminal and how wide it is. */
export interface ProgressStream {
  readonly isTTY?: boolean | undefined
  readonly columns?: number | undefined
  write(chunk: string): unknown
}

const BAR_WIDTH = 24

/** One frame: `title [#########---------------] 3/8 label`, cut to the terminal's width. */
export const renderProgress = (title: string, doneCount: number, total: number, label: string, columns: number): string => {
  const ratio = total <= 0 ? 1 : Math.min(1, doneCount / total)
  const filled = Math.round(ratio * BAR_WIDTH)
  const line = `${title} [${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${doneCount}/${total}${label === "" ? "" : ` ${label}`}`
  return line.length > columns - 1 ? line.slice(0, Math.max(0, columns - 2)) + "…" : line
}

/** A bar over `total` units titled `title`; a no-op where `stream` is not a terminal or there is nothing to do. */
export const progressBar = (
  title: string,
  total: number,
  stream: ProgressStream = process.stderr
): Progress => {
  if (stream.isTTY !== true || total <= 0) return { advance: () => Effect.void, done: Effect.void }
  let count = 0
  let label = ""
  let finished = false
  const draw = () => stream.write(`\r\x1b[2K${renderProgress(title, count, total, label, stream.columns || 80)}`)
  draw()
  return {
    advance: (n = 1, next) =>
      Effect.sync(() => {
        if (finished) return
        count = Math.min(total, count + n)
        if (next !== undefined) label = next
        draw()
      }),
    done: Effect.sync(() => {
      if (finished) return
      finished = true
      label = ""
      draw()
      stream.write("\n")
    })
  }
}
