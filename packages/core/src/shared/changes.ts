/**
 * The fields whose values differ between a stored record and its next
 * version, in the record's own field order. Values are compared as stored
 * (their JSON), so a field sent again with the value it already holds is no
 * change.
 */
export const changedKeys = <A extends object>(before: A, after: A, ignore: ReadonlyArray<keyof A> = []): Array<keyof A & string> =>
  (Object.keys(after) as Array<keyof A & string>).filter((k) =>
    !ignore.includes(k) && JSON.stringify(after[k]) !== JSON.stringify(before[k])
  )
