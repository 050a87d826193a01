export { default } from "@opsplatform/example-support/vitest"
