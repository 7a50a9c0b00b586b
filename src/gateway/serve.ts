import type { Logger } from 'pino';
import { loadConfigOrExit } from '../config/cli.js';
import { createLogger } from '../observability/logger.js';
import { assembleGateway } from './assemble.js';
import { startTracing } from './tracing.js';
import type { CompiledConfig } from '../config/types.js';
import { createConfigReloader } from '../reload/config-reloader.js';
import { watchConfigFile } from '../reload/watch.js';

/** Past the grace period, time left for closing resources before the process exits regardless. */
export const EXIT_MARGIN_MS = 5_000;

export interface ServeOptions {
  /** The config file: watched, and re-read on SIGHUP. */
  readonly file: string;
  readonly config: CompiledConfig;
  readonly logger: Logger;
}

/**
 * `serve`: main, admin and (when configured) decision listeners, one `listening` log line with their URLs (a port
 * of 0 is resolved there),
 * reload on SIGHUP and on file change, graceful exit on SIGTERM/SIGINT within `shutdown.grace_period`.
 */
export async function serveGateway({ file, config, logger }: ServeOptions): Promise<void> {
  let active = config;
  const traces = config.telemetry.traces;
  const tracing = traces && (await startTracing(traces, logger));
  const gateway = assembleGateway(config, { logger, ...(tracing && { tracing }) });
  const url = await gateway.app.listen({ host: config.listen.host, port: config.listen.port });
  const admin = config.admin.enabled
    ? await gateway.admin.listen({ host: config.admin.host, port: config.admin.port })
    : undefined;
  const decision =
    gateway.decision && config.decision
      ? await gateway.decision.listen({ host: config.decision.host, port: config.decision.port })
      : undefined;
  logger.info({ url, admin, ...(decision && { decision }) }, 'listening');
  void gateway.warm();

  const reloader = await createConfigReloader({
    file,
    apply: async (next) => {
      await gateway.reload(next);
      active = next;
    },
    onInvalid: () => gateway.metrics.configReload('failure'),
    logger,
  });
  const watcher = watchConfigFile(file, () => void reloader.reload('file'), {
    onError: (error) => logger.warn({ err: error }, 'config file watch failed; reload with SIGHUP'),
  });

  let stopping = false;
  const reload = () => {
    if (stopping) return;
    logger.info({ signal: 'SIGHUP' }, 'reloading config');
    void reloader.reload('signal');
  };
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    watcher.close();
    logger.info({ signal, grace_period_ms: active.shutdown.gracePeriod }, 'shutting down');
    setTimeout(() => process.exit(1), active.shutdown.gracePeriod + EXIT_MARGIN_MS).unref();
    gateway.close().then(
      () => {
        logger.info('shut down');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.on('SIGHUP', reload);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** `serve --config FILE` (or MCP_GATEWAY_CONFIG): load, log the warnings, serve until a signal ends the process. */
export async function serveCommand(file: string | undefined): Promise<void> {
  if (!file) {
    process.stderr.write('serve needs --config FILE or MCP_GATEWAY_CONFIG\n');
    process.exit(2);
  }
  const config = await loadConfigOrExit(file);
  const logger = createLogger({ level: config.logLevel });
  for (const warning of config.warnings) logger.warn({ warning }, 'config warning');
  await serveGateway({ file, config, logger });
}
