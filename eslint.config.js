// ESLint for the web page's modules (enginesrv/web/static): `npm ci && npx eslint
// enginesrv/web/static`, as .ci/run does. The recommended rules, in browsers, as ES modules.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["benchmarks/jocly/**", "node_modules/**", "build/**", ".ladder/**"] },
  js.configs.recommended,
  {
    files: ["enginesrv/web/static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    rules: {
      "no-unused-vars": ["error", { args: "after-used", argsIgnorePattern: "^_", caughtErrors: "none" }],
      eqeqeq: "error",
      "no-var": "error",
      "prefer-const": "error",
      "no-implicit-globals": "error",
      "no-shadow": "error",
    },
  },
];
