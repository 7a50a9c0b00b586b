import { readFileSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import type { ClientResults } from './evidence.js';
import type { Cell, RouteKind } from './matrix.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPTED_BROWSER = fileURLToPath(new URL('./scripted-browser.mjs', import.meta.url));

export interface MatrixContext {
  /** The demo routes: JWT (step-up), and the same calculator with `policy.upfront_scopes`. */
  readonly calcUrl: URL;
  readonly upfrontUrl: URL;
  /** The calculator behind opaque tokens (RFC 7662 introspection), and the notes server behind a per-user grant. */
  readonly opaqueUrl: URL;
  readonly notesUrl: URL;
  /** Logs and per-client state of this run. */
  readonly runDir: string;
  /**
   * A fresh page (own cookies and storage) in the run's headless Chromium, which reaches loopback only; closed
   * when the client's run ends.
   */
  newPage(): Promise<Page>;
  /** e.g. `Chromium 156`. */
  readonly chromium: string;
  /**
   * Called once the client's main run (its row's cells) is over, before it tries the other route kinds: the row is
   * judged on what was observed until then only, so another route's authorization cannot pass a cell for it.
   */
  endOfMainRun(): void;
}

export interface DriverOutcome {
  readonly results: ClientResults;
  /** Anything a reader of the matrix should know about how this client behaved. */
  readonly notes?: readonly string[];
  /** The route kinds the client was also run on, besides its main route. */
  readonly routes?: Readonly<Partial<Record<RouteKind, Cell>>>;
}

export interface ClientDriver {
  /** Row name in docs/compatibility.md (stable: regressions are matched by it). */
  readonly client: string;
  readonly version: (context: MatrixContext) => string;
  /** The whole run of this client is stopped after this long. */
  readonly timeoutMs: number;
  /** The route kind of the main run (`calcUrl` or `upfrontUrl`); default `jwt`. */
  readonly mainRoute?: Extract<RouteKind, 'jwt' | 'upfront'>;
  run(context: MatrixContext): Promise<DriverOutcome>;
}

/** A file of an installed devDependency (by its name in package.json, an npm alias included). */
export function packageFile(name: string, ...path: string[]): string {
  return join(REPO_ROOT, 'node_modules', name, ...path);
}

function manifest(name: string): { readonly version: string; readonly bin?: Readonly<Record<string, string>> } {
  return JSON.parse(readFileSync(packageFile(name, 'package.json'), 'utf8')) as ReturnType<typeof manifest>;
}

/** The installed version of a package. */
export function packageVersion(name: string): string {
  return manifest(name).version;
}

/** Absolute path of one of a package's `bin` entries. */
export function packageBin(name: string, bin: string): string {
  const entry = manifest(name).bin?.[bin];
  if (entry === undefined) throw new Error(`${name} has no bin "${bin}"`);
  return packageFile(name, entry);
}

/**
 * The environment of a client process: its own empty HOME (no stored tokens, catalogs or keychain from the
 * machine), no colours, and, for the browser step, the scripted browser both as $BROWSER and as `xdg-open` on
 * PATH, so however the client opens a URL, it lands there.
 */
export async function clientEnvironment(directory: string, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const home = join(directory, 'home');
  const shims = join(directory, 'bin');
  await mkdir(home, { recursive: true });
  await mkdir(shims, { recursive: true });
  // A client started again in the same directory (to find its stored tokens) finds the shim there already.
  await symlink(SCRIPTED_BROWSER, join(shims, 'xdg-open')).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  });
  return {
    PATH: `${shims}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    BROWSER: SCRIPTED_BROWSER,
    SCRIPTED_BROWSER_LOG: join(directory, 'browser.log'),
    NO_COLOR: '1',
    LANG: 'C.UTF-8',
    ...extra,
  };
}
