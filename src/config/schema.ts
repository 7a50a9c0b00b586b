import { z } from 'zod';
import { adminSchema } from './sections/admin.js';
import { authorizationServerSchema } from './sections/authorization-server.js';
import { cacheSchema } from './sections/cache.js';
import { consentSchema } from './sections/consent.js';
import { decisionSchema } from './sections/decision.js';
import { limitsSchema } from './sections/limits.js';
import { listenSchema } from './sections/listen.js';
import { logSchema } from './sections/log.js';
import { publicUrlKeys } from './sections/public-url.js';
import { routesSchema } from './sections/routes/route-table.js';
import { shutdownSchema } from './sections/shutdown.js';
import { signingKeySchema } from './sections/signing-key.js';
import { telemetrySchema } from './sections/telemetry.js';

export { DECISION_PROXIES, DECISION_SECRET_HEADER } from './sections/decision.js';

/**
 * The configuration file's schema: the single source of truth for key names, types, defaults and the JSON Schema
 * (scripts/write-schema.ts). Each top-level section is defined in sections/<section>.ts, a route and its sub-sections
 * (upstream, upstream.auth, tokens, policy, ...) in sections/routes/, the field builders they share in fields.ts.
 * Checks that need more than one value (uniqueness, http allowed by `allow_insecure_http`) run when the config is
 * compiled (compile.ts, cross-section.ts).
 */
export const configSchema = z
  .strictObject({
    listen: listenSchema,
    admin: adminSchema,
    decision: decisionSchema,
    shutdown: shutdownSchema,
    ...publicUrlKeys,
    log: logSchema,
    limits: limitsSchema,
    cache: cacheSchema,
    consent: consentSchema,
    authorization_server: authorizationServerSchema,
    routes: routesSchema,
    signing_key: signingKeySchema,
    telemetry: telemetrySchema,
  })
  .meta({
    title: 'mcp-auth-gateway configuration',
    description: 'Routes, token validation and upstreams of the gateway.',
  });

export type RawConfig = z.output<typeof configSchema>;
