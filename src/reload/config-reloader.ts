import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { parseConfig, type ConfigProblem } from '../config/load.js';
import { errorCode } from '../config/problem.js';
import type { CompiledConfig } from '../config/types.js';

export type ReloadTrigger = 'signal' | 'file';

export type ReloadOutcome =
  | { readonly result: 'success' }
  /** The file's bytes are those of the last content tried: nothing was rebuilt or reported again. */
  | { readonly result: 'unchanged' }
  | { readonly result: 'failure'; readonly problems: readonly ConfigProblem[] };

export interface ConfigReloader {
  /**
   * Reads, validates and applies the file. A file event reloads only when the bytes differ from the last content
   * tried, loaded or refused, so a burst of directory events reloads nothing new and a broken file is reported
   * once per distinct content; a signal always reloads (secrets behind `${file:...}` may have
   * changed under an identical file). Calls made while a reload runs are folded into one more reload after it.
   */
  reload(trigger: ReloadTrigger): Promise<ReloadOutcome>;
}

export interface ConfigReloaderOptions {
  readonly file: string;
  /** Builds and swaps in the new runtime; rejects when it cannot (the old one keeps serving). */
  readonly apply: (config: CompiledConfig) => Promise<void>;
  /** A file that does not load counts as a failed reload. */
  readonly onInvalid: () => void;
  readonly logger: Logger;
  /** `${env:...}` source. Default: process.env. */
  readonly env?: NodeJS.ProcessEnv;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Starts from the file's current bytes, taken to be the config the gateway was started with. */
export async function createConfigReloader(options: ConfigReloaderOptions): Promise<ConfigReloader> {
  const { file, logger } = options;
  // The content of the last reload tried, whatever its outcome; at start, the file the gateway started with.
  let triedHash = await readFile(file, 'utf8').then(sha256, () => undefined);
  let running: Promise<ReloadOutcome> | undefined;
  let queued: Promise<ReloadOutcome> | undefined;
  let queuedForced = false;

  const failed = (trigger: ReloadTrigger, problems: readonly ConfigProblem[]): ReloadOutcome => {
    options.onInvalid();
    logger.error({ trigger, file, problems }, 'config reload failed; the previous config keeps serving');
    return { result: 'failure', problems };
  };

  async function reloadOnce(trigger: ReloadTrigger, force: boolean): Promise<ReloadOutcome> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      // An unreadable file is one "content" per error code: reported once, not at every event.
      const unreadable = `unreadable:${errorCode(error)}`;
      if (!force && unreadable === triedHash) return { result: 'unchanged' };
      triedHash = unreadable;
      return failed(trigger, [{ path: '', message: `cannot read config file ${file} (${errorCode(error)})` }]);
    }
    const hash = sha256(text);
    if (!force && hash === triedHash) return { result: 'unchanged' };
    triedHash = hash;
    const parsed = parseConfig(text, { source: file, env: options.env });
    if (!parsed.ok) return failed(trigger, parsed.problems);
    try {
      await options.apply(parsed.config);
    } catch (error) {
      logger.error({ trigger, file, err: error }, 'config reload failed while building the new runtime; the previous config keeps serving');
      return { result: 'failure', problems: [{ path: '', message: 'the new runtime could not be built' }] };
    }
    for (const warning of parsed.config.warnings) logger.warn({ warning }, 'config warning');
    logger.info({ trigger, file, routes: parsed.config.routes.map((route) => route.name) }, 'config reloaded');
    return { result: 'success' };
  }

  function reload(trigger: ReloadTrigger): Promise<ReloadOutcome> {
    const force = trigger === 'signal';
    if (!running) {
      running = reloadOnce(trigger, force).finally(() => {
        running = undefined;
      });
      return running;
    }
    queuedForced ||= force;
    queued ??= running.then(() => {
      const forced = queuedForced;
      queued = undefined;
      queuedForced = false;
      return reload(forced ? 'signal' : trigger);
    });
    return queued;
  }

  return { reload };
}
