export { DEV_ACCOUNT_ID, startDevAuthServer } from './dev-auth-server.js';
export { defaultClientsFile, defaultSigningKeysFile } from './signing-keys.js';
export { devAuthServerOptionsFromConfig, introspectionClientsFromRoutes, resourcesFromRoutes } from './from-config.js';
export type {
  AccessTokenFormat,
  DevAuthServer,
  DevAuthServerOptions,
  DevClient,
  DevClientAuthMethod,
  DevResource,
} from './types.js';
