import tsParser from "@typescript-eslint/parser"
import regexp from "eslint-plugin-regexp"

/**
 * Only one concern is linted: regular expressions whose matching time can
 * grow faster than linearly with the input (decided: docs/decisions.md,
 * "Limits and ranges"). `packages/core/test/regexLint.test.ts` runs it in
 * `npm test`.
 */
export default [
  {
    files: ["packages/*/src/**/*.ts"],
    languageOptions: { parser: tsParser, ecmaVersion: "latest", sourceType: "module" },
    plugins: { regexp },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "regexp/no-super-linear-backtracking": ["error", { report: "potential" }],
      "regexp/no-super-linear-move": ["error", { report: "potential", ignoreSticky: false, ignorePartial: false }]
    }
  }
]
