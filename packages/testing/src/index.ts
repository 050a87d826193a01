export * from "./fixtures.ts"
export * from "./memory/index.ts"
