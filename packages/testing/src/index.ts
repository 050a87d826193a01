export * from "./fixtures.ts"
export * from "./memory/index.ts"
export * from "./routeFixtures.ts"
