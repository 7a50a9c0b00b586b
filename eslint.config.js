import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** What the decision never imports: an HTTP server, an HTTP client, a logger. */
const FRAMEWORKS = ['fastify', '@fastify/*', 'undici', 'pino'];

/** Every folder of src/ but the ones named, as `from` zones of import-x/no-restricted-paths. */
function srcExcept(...allowed) {
  return [
    'auth', 'authserver', 'cache', 'client', 'config', 'credentials', 'decision', 'doors', 'gateway', 'grants',
    'identity', 'lib', 'observability', 'policy', 'ratelimit', 'reload', 'session',
  ]
    .filter((folder) => !allowed.includes(folder))
    .map((folder) => `./src/${folder}`);
}

/**
 * The boundaries of the layout (docs/architecture.md): which folder may import which. A new rule cannot land in
 * a door by accident, and nothing below the wiring root reaches back up to it.
 */
const BOUNDARIES = [
  // The decision owns its contract: it imports its own files, config, policy and lib, nothing else.
  { target: './src/decision', from: srcExcept('decision', 'config', 'policy', 'lib'), message: 'decision/ imports only config/, policy/ and lib/: define a port instead' },
  // Past the decision's public face: everything outside decision/ imports decision/index.ts only.
  { target: './src/!(decision)/**/*', from: './src/decision', except: ['./index.ts'], message: "import the decision's public face, src/decision/index.ts" },
  { target: './src/*.ts', from: './src/decision', except: ['./index.ts'], message: "import the decision's public face, src/decision/index.ts" },
  // Nothing but main.ts imports the wiring root.
  { target: './src/!(gateway)/**/*', from: './src/gateway', message: 'only main.ts imports the wiring root (src/gateway/)' },
  { target: './src/!(main).ts', from: './src/gateway', message: 'only main.ts imports the wiring root (src/gateway/)' },
  // The bottom of the house.
  { target: './src/config', from: srcExcept('config'), message: 'config/ imports nothing else of the project' },
  { target: './src/lib', from: srcExcept('lib'), message: 'lib/ imports nothing else of the project' },
  { target: './src/cache', from: srcExcept('cache', 'lib'), message: 'cache/ imports only lib/' },
  { target: './src/policy', from: srcExcept('policy', 'config', 'lib'), message: 'policy/ imports only config/ and lib/' },
];

export default tseslint.config(
  { ignores: ['dist/**', '.ab/**', 'node_modules/**', 'coverage/**', 'bench/results/**', 'schema/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js', 'bin/*.js', 'test/clients/*.mjs', 'config/nginx/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'Use a literal union instead of enum.' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })] },
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: BOUNDARIES }] },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/doors/**', 'src/gateway/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', '@fastify/*'], message: 'fastify belongs to the doors (src/doors/) and the wiring root (src/gateway/)' }] }],
    },
  },
  {
    files: ['src/decision/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: FRAMEWORKS, message: 'the decision depends on no framework: no HTTP server, HTTP client or logger' }] },
      ],
    },
  },
  {
    // Tracing off costs nothing because nothing of it is loaded: elsewhere only its types are imported, and
    // src/gateway/tracing.ts loads the SDK and the doors' part (a dynamic import) once telemetry.traces is set.
    files: ['src/**/*.ts'],
    ignores: ['src/observability/tracing-sdk.ts', 'src/doors/shared/tracing.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@opentelemetry/*', '@fastify/otel', '**/tracing-sdk.js', '**/shared/tracing.js'],
              allowTypeImports: true,
              message: 'tracing is loaded only when telemetry.traces is set: import its types, or load it through src/gateway/tracing.ts',
            },
          ],
        },
      ],
    },
  },
  {
    // Plain JavaScript: tooling, browser scripts, and nginx's njs (its own runtime, no Node types).
    files: ['eslint.config.js', 'bin/*.js', 'test/clients/*.mjs', 'config/nginx/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
