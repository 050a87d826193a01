/**
 * A state machine as a table: for each action, the statuses it may start from
 * and the status it leads to. Every lifecycle in core (obligations, expenses,
 * delivery routes, webhook deliveries, …) is one of these, so the rules of a
 * resource read as data and are tested pair by pair.
 */
export type TransitionRules<S extends string, A extends string> = Readonly<
  Record<A, { readonly from: ReadonlyArray<S>; readonly to: S }>
>

export interface TransitionTable<S extends string, A extends string> {
  readonly rules: TransitionRules<S, A>
  /** Where each status may go, as listed by the actions (a final status maps to none). */
  readonly moves: Readonly<Record<S, ReadonlyArray<S>>>
  /** The status `action` leads to from `from`, or undefined when the table forbids it. */
  readonly target: (from: S, action: A) => S | undefined
  /** Whether some action moves `from` to `to` (staying put is a move only where an action says so). */
  readonly can: (from: S, to: S) => boolean
}

export const transitionTable = <S extends string, A extends string>(
  statuses: ReadonlyArray<S>,
  rules: TransitionRules<S, A>
): TransitionTable<S, A> => {
  const entries = Object.values<{ readonly from: ReadonlyArray<S>; readonly to: S }>(rules)
  const moves = {} as Record<S, ReadonlyArray<S>>
  for (const from of statuses) moves[from] = [...new Set(entries.filter((r) => r.from.includes(from)).map((r) => r.to))]
  return {
    rules,
    moves,
    target: (from, action) => (rules[action].from.includes(from) ? rules[action].to : undefined),
    can: (from, to) => moves[from].includes(to)
  }
}
