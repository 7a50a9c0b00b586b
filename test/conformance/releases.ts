import {
  DPOP_CLIENT_SCENARIOS,
  REQUIRED_CLIENT_SCENARIOS,
  REQUIRED_NEXT_CLIENT_SCENARIOS,
  REQUIRED_NEXT_SERVER_SCENARIOS,
  REQUIRED_SERVER_SCENARIOS,
} from './required-scenarios.js';

/** One run of the suite's CLI: its arguments after `server` or `client`, and the protocol revision it runs at. */
export interface SuiteRun {
  /** Names the run in the output and its results directory. */
  readonly name: string;
  readonly args: readonly string[];
  /**
   * Set when the run's scenarios also run at another revision in the same release: their results are named
   * `<scenario>@<wire>` (results.ts), and so are their entries in the expectation files.
   */
  readonly wire?: string;
}

/** One release of @modelcontextprotocol/conformance: what runs, what must have run, what is expected to fail. */
export interface SuiteRelease {
  /** The dependency it is installed as (package.json). */
  readonly packageName: string;
  readonly server: readonly SuiteRun[];
  readonly client: readonly SuiteRun[];
  readonly requiredServer: readonly string[];
  readonly requiredClient: readonly string[];
  /** Files next to this one: scenario → why it is expected to fail. */
  readonly expectedServerFailures: string;
  readonly expectedClientFailures: string;
}

/** The release CI has run all along. */
export const CURRENT_RELEASE: SuiteRelease = {
  packageName: '@modelcontextprotocol/conformance',
  server: [{ name: 'server-all', args: ['--suite', 'all'] }],
  // `auth` is every 2025-11-25 auth scenario.
  client: ['auth', 'backcompat', 'draft'].map((suite) => ({ name: suite, args: ['--suite', suite] })),
  requiredServer: REQUIRED_SERVER_SCENARIOS,
  requiredClient: REQUIRED_CLIENT_SCENARIOS,
  expectedServerFailures: 'expected-failures.json',
  expectedClientFailures: 'expected-client-failures.json',
};

/**
 * The newest alpha, with the 2026-07-28 scenarios: the auth suite at both wires (2025-11-25 by the suite's own
 * inference, then 2026-07-28), the draft scenarios (2026-07-28 only) and backcompat; server scenarios through the
 * gateway at 2025-11-25 (every one) and what 2026-07-28 requires.
 */
export const NEXT_RELEASE: SuiteRelease = {
  packageName: 'conformance-next',
  server: [
    { name: 'server-all', args: ['--suite', 'all'] },
    { name: 'server-2026-07-28', args: ['--requirements', '2026-07-28'], wire: '2026-07-28' },
  ],
  client: [
    { name: 'auth', args: ['--suite', 'auth'] },
    { name: 'auth-2026-07-28', args: ['--suite', 'auth', '--spec-version', '2026-07-28'], wire: '2026-07-28' },
    { name: 'draft', args: ['--suite', 'draft'] },
    { name: 'backcompat', args: ['--suite', 'backcompat'] },
    // The DPoP extension (SEP-1932), not scored by the suite: login asks for DPoP-bound tokens and proves them.
    ...DPOP_CLIENT_SCENARIOS.map((scenario) => ({ name: scenario.replace('/', '-'), args: ['--scenario', scenario] })),
  ],
  requiredServer: REQUIRED_NEXT_SERVER_SCENARIOS,
  requiredClient: REQUIRED_NEXT_CLIENT_SCENARIOS,
  expectedServerFailures: 'expected-failures-next.json',
  expectedClientFailures: 'expected-client-failures-next.json',
};
