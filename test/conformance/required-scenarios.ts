/**
 * The scenarios each phase of `npm run test:conformance` must have run (a checks.json written), so that a suite
 * that crashes, skips a scenario or drops one in a new release cannot pass by what it left out. The lists are
 * what each release ran (releases.ts); a scenario expected to fail stays listed here too.
 */

/** `server --suite all` through the gateway: every server scenario, `dns-rebinding-protection` included. */
export const REQUIRED_SERVER_SCENARIOS: readonly string[] = [
  'server-initialize',
  'logging-set-level',
  'ping',
  'completion-complete',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'json-schema-2020-12',
  'elicitation-sep1034-defaults',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'elicitation-sep1330-enums',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'dns-rebinding-protection',
];

/** Every 2025-11-25 auth scenario (`--suite auth`), in both releases. */
const AUTH_SCENARIOS: readonly string[] = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
];

const BACKCOMPAT_SCENARIOS: readonly string[] = ['auth/2025-03-26-oauth-metadata-backcompat', 'auth/2025-03-26-oauth-endpoint-fallback'];

/** 0.1.16's client suites with `login` as the client: every 2025-11-25 auth scenario, then backcompat, then draft. */
export const REQUIRED_CLIENT_SCENARIOS: readonly string[] = [
  ...AUTH_SCENARIOS,
  ...BACKCOMPAT_SCENARIOS,
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
];

/** 0.2.0-alpha.12's DPoP client scenarios (extension SEP-1932, in no suite the runs above name). */
export const DPOP_CLIENT_SCENARIOS: readonly string[] = ['auth/dpop', 'auth/dpop-nonce'];

/**
 * 0.2.0-alpha.12's: the auth suite at both wires, every draft scenario (2026-07-28 only, also the client scenarios
 * that are not about authorization), then backcompat.
 */
export const REQUIRED_NEXT_CLIENT_SCENARIOS: readonly string[] = [
  ...AUTH_SCENARIOS,
  ...AUTH_SCENARIOS.map((scenario) => `${scenario}@2026-07-28`),
  'request-metadata',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/authorization-server-migration',
  'auth/iss-supported',
  'auth/iss-not-advertised',
  'auth/iss-supported-missing',
  'auth/iss-wrong-issuer',
  'auth/iss-unexpected',
  'auth/iss-normalized',
  'auth/metadata-issuer-mismatch',
  'sep-2322-client-request-state',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
  ...BACKCOMPAT_SCENARIOS,
  ...DPOP_CLIENT_SCENARIOS,
];

/** 0.1.16's server scenarios that 2026-07-28 removed (they need initialize, sessions or server requests). */
const ONLY_UNTIL_2025_11_25: ReadonlySet<string> = new Set([
  'server-initialize',
  'logging-set-level',
  'ping',
  'tools-call-with-logging',
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'server-sse-polling',
  'elicitation-sep1330-enums',
  'resources-subscribe',
  'resources-unsubscribe',
]);

/** The server scenarios 0.2.0-alpha.12 added for 2026-07-28, the tasks extension's and multi round-trip requests. */
const ADDED_FOR_2026_07_28: readonly string[] = [
  'server-stateless',
  'sep-2164-resource-not-found',
  'caching',
  'http-header-validation',
  'http-custom-header-server-validation',
  'tasks-lifecycle',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
  'input-required-result-basic-elicitation',
  'input-required-result-basic-sampling',
  'input-required-result-basic-list-roots',
  'input-required-result-request-state',
  'input-required-result-multiple-input-requests',
  'input-required-result-multi-round',
  'input-required-result-missing-input-response',
  'input-required-result-non-tool-request',
  'input-required-result-result-type',
  'input-required-result-unsupported-methods',
  'input-required-result-tampered-state',
  'input-required-result-capability-check',
  'input-required-result-ignore-extra-params',
  'input-required-result-validate-input',
];

/**
 * 0.2.0-alpha.12's server scenarios through the gateway: `--suite all` (0.1.16's, `server-session-lifecycle`, and
 * those added for 2026-07-28, at the 2025-11-25 wire), then what 2026-07-28 requires, at its wire. Four more
 * scenarios of `--suite all` end without a result when their setup fails (sep-2640-skills-directory, -enumeration,
 * -manifest, tasks-capability-negotiation), so they are not listed.
 */
export const REQUIRED_NEXT_SERVER_SCENARIOS: readonly string[] = [
  ...REQUIRED_SERVER_SCENARIOS,
  'server-session-lifecycle',
  ...ADDED_FOR_2026_07_28,
  ...[...REQUIRED_SERVER_SCENARIOS.filter((scenario) => !ONLY_UNTIL_2025_11_25.has(scenario)), ...ADDED_FOR_2026_07_28].map(
    (scenario) => `${scenario}@2026-07-28`,
  ),
];
