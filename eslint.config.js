import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', '.ab/**', 'node_modules/**', 'coverage/**', 'bench/results/**', 'schema/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js', 'bin/*.js', 'test/clients/*.mjs', 'config/nginx/*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'Use a literal union instead of enum.' }],
    },
  },
  {
    // Plain JavaScript: tooling, browser scripts, and nginx's njs (its own runtime, no Node types).
    files: ['eslint.config.js', 'bin/*.js', 'test/clients/*.mjs', 'config/nginx/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
