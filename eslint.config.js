// The linter of `npm run check`: typescript-eslint's type-aware rules that catch real mistakes (a promise
// nobody awaits or that a callback drops, a value never used, `any` leaking into typed code), not
// matters of style (docs/decisions.md).
import tseslint from 'typescript-eslint';

const testRunner = ['describe', 'it', 'test', 'before', 'after', 'beforeEach', 'afterEach', 'suite'];

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', '.bench/', '.scratch/', '.screenshots/', 'src/dashboard/assets/'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test runs what describe() and it() return: those promises are not ours to await.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: testRunner }] }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // An async function without await is still a function that answers a promise: style, not a mistake.
      '@typescript-eslint/require-await': 'off',
      // Our objects are closures made by functions, not classes, and Kysely binds its expression
      // builder's methods (`({ exists, selectFrom }) =>`): a method taken off its object keeps working.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // A migration is frozen in time: it takes Kysely<any>, never today's schema types.
    files: ['src/store/migrations/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
  {
    // Tests read the JSON the API answered, which is `any` until asserted on: there it is the point.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
