// Lint: the promise rules STYLE.md asks for (no floating or misused promises) on the service's
// TypeScript; type-aware, against tsconfig.json. Formatting is not linted.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    files: ['core/**/*.ts', 'plugins/**/*.ts', 'bin/**/*.ts', 'examples/**/*.ts'],
    // Test files are left out: tap's top-level t.test(...) calls are its idiom, not a bug.
    ignores: ['**/node_modules/**', '**/dist/**', '**/test/**'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
);
