// Type-checked lint: the rules that matter most for a queue are the promise ones,
// because a floating promise is a lost ack or an unhandled rejection.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { plugin as delayq } from './scripts/lint/no-prototype-keys.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**', 'eslint.config.js', 'src/stores/redis/lua/**', 'tmp/**', 'test/openapi/generated-client/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    ignores: ['src/server/ui/**', 'scripts/lint/**'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises that the runner itself awaits.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
      // async without await is how a method turns a synchronous throw into a rejection.
      '@typescript-eslint/require-await': 'off',
    },
  },
  // No string from outside (a topic, an id, a header name) reaches Object.prototype
  // (scripts/lint/no-prototype-keys.js, src/core/dict.ts). Tests index their own objects.
  {
    files: ['src/**/*.ts'],
    plugins: { delayq },
    rules: { 'delayq/no-prototype-keys': 'error' },
  },
  // The dashboard's browser modules (plain JS, no build step): recommended rules, no types.
  {
    files: ['src/server/ui/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        ['window', 'document', 'location', 'sessionStorage', 'fetch', 'URLSearchParams', 'ResizeObserver', 'confirm', 'addEventListener', 'removeEventListener', 'setTimeout', 'clearTimeout', 'console', 'AbortController', 'TextDecoderStream'].map((name) => [name, 'readonly']),
      ),
    },
  },
  // The lint rules of this repository (plain JS: eslint.config.js imports them as they are).
  {
    files: ['scripts/lint/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { sourceType: 'module' },
  },
);
