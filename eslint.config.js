// `npm run lint`: typescript-eslint's recommended rules, and the boundaries of docs/architecture.md
// ("Modules and their order"): each folder of src/ imports only the folders below it, and the
// domains only through their index.ts. Import cycles between files are checked by dpdm, the second
// half of `npm run lint` (an ESLint import resolver needs native packages for every platform, which
// a lock file made on one platform cannot list).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The folders of src/, lowest first: each may import only those before it. */
const ORDER = ['db', 'platform', 'ports', 'jobs', 'gateway', 'invoicing', 'pages', 'console'];
/** The state files the table types may take their unions from (type-only; they import nothing). */
const STATE_FILES = ['../gateway/payment-state.js', '../invoicing/invoice-state.js', '../jobs/job-state.js', '../ports/messaging.js', '../ports/checkout.js'];
const ROOT = ['../app.js', '../server.js', '../cli.js', '../cli/*'];

/** no-restricted-imports for one folder: the folders above it, and the domains' private files. */
function boundaries(folder) {
  const above = ORDER.slice(ORDER.indexOf(folder) + 1);
  const patterns = [
    { group: [...above.map((f) => `../${f}/*`), ...ROOT], message: `src/${folder} may import only the folders below it (${ORDER.slice(0, ORDER.indexOf(folder)).join(', ') || 'none'}); see docs/architecture.md.` },
  ];
  for (const domain of ['gateway', 'invoicing']) {
    if (domain !== folder && !above.includes(domain)) {
      patterns.push({ group: [`../${domain}/*`, `!../${domain}/index.js`], message: `use src/${domain} only through ../${domain}/index.js (its service and public rules).` });
    }
  }
  if (folder === 'db') {
    // The table types use the domains' state unions: type-only imports of files that import nothing.
    patterns[0] = { group: [...above.flatMap((f) => [`../${f}/*`]), ...STATE_FILES.map((f) => `!${f}`), ...ROOT], message: patterns[0].message };
    patterns.push({ group: STATE_FILES, allowTypeImports: true, message: 'src/db may take only types from the state files.' });
  }
  return {
    files: [`src/${folder}/**/*.ts`],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
  };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tmp/**', 'reports/**', '.stryker-tmp/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', fetch: 'readonly', AbortController: 'readonly', Headers: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', NodeJS: 'readonly', structuredClone: 'readonly', queueMicrotask: 'readonly', performance: 'readonly', setImmediate: 'readonly', URLSearchParams: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Tests and harnesses read loosely typed JSON answers.
      '@typescript-eslint/no-explicit-any': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  // Migrations are frozen as they shipped (src/db/migrations/README.md).
  { files: ['src/db/migrations/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  ...ORDER.map(boundaries),
);
