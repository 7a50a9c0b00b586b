import { loadConfigOrExit } from '../config/cli.js';
import { createLogger } from '../observability/logger.js';
import { defaultClientsFile, defaultSigningKeysFile, devAuthServerOptionsFromConfig, startDevAuthServer } from './index.js';

export interface DevAuthServerFlags {
  readonly issuer?: string;
  readonly autoApprove: boolean;
  readonly keysFile?: string;
}

/** `dev-auth-server --config FILE`: a development authorization server for FILE's routes, until SIGTERM/SIGINT. */
export async function devAuthServerCommand(file: string | undefined, options: DevAuthServerFlags): Promise<void> {
  if (!file) {
    process.stderr.write('dev-auth-server needs --config FILE (the gateway config it issues tokens for)\n');
    process.exit(2);
  }
  const config = await loadConfigOrExit(file);
  const logger = createLogger({ level: config.logLevel });
  const serverOptions = devAuthServerOptionsFromConfig(config, options);
  const server = await startDevAuthServer({
    ...serverOptions,
    signingKeysFile: options.keysFile ?? defaultSigningKeysFile(serverOptions.issuer),
    // A restart keeps every registration: clients that cached their id go on working.
    clientsFile: defaultClientsFile(serverOptions.issuer),
    logger,
  });
  logger.info({ issuer: server.issuer, autoApprove: options.autoApprove }, 'development authorization server listening');
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
