// ESLint for every TypeScript and JavaScript file of the repository (`npm run lint`).
// TypeScript files are linted with type information (typescript-eslint's project service reads
// the tsconfig that includes each file), so promise misuse and unused code are found across files.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

const typeScriptFiles = ["**/*.ts"];

// The domain folders of core/src. Each exposes its public surface from its index.ts: other folders
// import only that file. They never import rpc/ (which maps the protocol to the domain) or the
// generated protocol code.
const domainFolders = ["storage", "tasks", "checkpoints", "agent", "runtime", "capabilities", "import"];
const throughIndex = (folders) =>
  folders.map((folder) => ({
    regex: `^(\\./|(\\.\\./)+)${folder}/(?!index\\.js$)`,
    message: `Import ${folder}/ through its index.ts.`,
  }));
const protocolFree = {
  regex: "^(\\./|(\\.\\./)+)(rpc|gen)/",
  message: "Domain code never imports rpc/ or generated protocol code: rpc/ maps between them.",
};
const restrictImports = (patterns) => ({ "no-restricted-imports": ["error", { patterns }] });
const javaScriptFiles = ["**/*.js", "**/*.mjs", "**/*.cjs"];

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "dist/**",
      "core/src/gen/**",
      "adapters/*/out/**",
      "adapters/jetbrains/**",
      ".cache/**",
      ".bench/**",
      ".scratch/**",
      ".stryker-tmp/**",
      "test-output/**",
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  {
    files: typeScriptFiles,
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "@typescript-eslint/consistent-type-imports": [
        "error",
        // `typeof import("...")` names the type of a module loaded lazily with `await import()`.
        { fixStyle: "inline-type-imports", disallowTypeAnnotations: false },
      ],
      // An async function without await is how many interface methods return a promise.
      "@typescript-eslint/require-await": "off",
      // Terminal and protocol sanitizers match control characters on purpose.
      "no-control-regex": "off",
      // Readers of legacy and wire formats turn whatever JSON value they find into text on purpose.
      "@typescript-eslint/no-base-to-string": "off",
      // An abort reason or a caught error is passed on as it is.
      "@typescript-eslint/prefer-promise-reject-errors": [
        "error",
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // A failure caught earlier is rethrown after clean-up (`if (failure !== undefined) throw failure`),
      // where TypeScript's narrowing of unknown leaves a type the rule refuses.
      "@typescript-eslint/only-throw-error": "off",
      // Objects of callbacks built inside a method name their owner.
      "@typescript-eslint/no-this-alias": ["error", { allowedNames: ["loop", "fast"] }],
    },
  },
  {
    // Tests and benchmarks read JSON printed by the programs they run and assert on its shape;
    // vitest's expect(...) takes methods unbound.
    files: ["test/**/*.ts", "bench/**/*.ts", "adapters/vscode/src/test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/unbound-method": "off",
    },
  },
  {
    files: ["core/src/**/*.ts"],
    rules: restrictImports(throughIndex(domainFolders)),
  },
  {
    // A process's first locale formatting or collation loads ICU's data: 10-18 ms of CPU that
    // every CLI task paid once in the CLI and once in its sidecar (core/src/text/ has both without).
    files: ["core/src/**/*.ts", "adapters/cli/src/**/*.ts"],
    ignores: ["core/src/gen/**"],
    rules: {
      "no-restricted-properties": [
        "error",
        {
          property: "toLocaleString",
          message: "Use withThousands (core/src/text/numbers.ts): no ICU on a task's way.",
        },
        {
          property: "localeCompare",
          message: "Use compareNames (core/src/text/name-order.ts): no ICU on a task's way.",
        },
      ],
    },
  },
  {
    files: domainFolders.map((folder) => `core/src/${folder}/**/*.ts`),
    rules: restrictImports([...throughIndex(domainFolders), protocolFree]),
  },
  {
    // The start-up path (loaded before the handshake) imports the two storage modules it needs,
    // not the whole folder.
    files: ["core/src/boot.ts"],
    rules: restrictImports(throughIndex(domainFolders.filter((folder) => folder !== "storage"))),
  },
  {
    // `npm run test:unit` runs these: in-process, with no built binary and no other program.
    files: ["**/*.unit.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "node:child_process", message: "A unit test starts no process: name it *.test.ts." },
            { name: "child_process", message: "A unit test starts no process: name it *.test.ts." },
          ],
          patterns: [
            {
              group: [
                "**/helpers/sidecar.js",
                "**/helpers/scoped-sidecars.js",
                "**/model-server/spawn.js",
                "**/dist/**",
              ],
              message: "A unit test needs no built binary and starts no process: name it *.test.ts.",
            },
          ],
        },
      ],
    },
  },
  {
    files: javaScriptFiles,
    extends: [js.configs.recommended],
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "module",
      globals: { ...globals.node },
    },
    rules: {
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "no-control-regex": "off",
    },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
  },
  {
    // The webview script runs in the browser inside VS Code.
    files: ["adapters/vscode/media/**/*.js"],
    languageOptions: { sourceType: "script", globals: { ...globals.browser, acquireVsCodeApi: "readonly" } },
  },
);
