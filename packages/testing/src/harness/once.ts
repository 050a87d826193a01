/**
 * A fixture of the whole test run, started by the first project's global
 * setup that asks for it and stopped by the last one's teardown. Vitest runs
 * every project's global setup in its main process but loads the file once
 * per project, so the fixture lives on `globalThis`, not in a module variable.
 */
export const sharedFixture = <A>(
  key: string,
  start: () => Promise<{ readonly value: A; readonly stop: () => Promise<void> }>
) => {
  const slot = Symbol.for(`opsplatform.test-fixture.${key}`)
  const store = globalThis as unknown as Record<symbol, { users: number; started: ReturnType<typeof start> } | undefined>
  return async (): Promise<{ readonly value: A; readonly release: () => Promise<void> }> => {
    const entry = store[slot] ?? (store[slot] = { users: 0, started: start() })
    entry.users++
    const started = await entry.started
    return {
      value: started.value,
      release: async () => {
        if (--entry.users > 0) return
        store[slot] = undefined
        await started.stop()
      }
    }
  }
}
