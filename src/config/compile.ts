import { authorizationServerRouteProblems, consentProblems, crossSectionWarnings, insecureHttpProblems, listenerPortProblems } from './cross-section.js';
import { deepFreeze } from './freeze.js';
import type { ConfigProblem } from './problem.js';
import type { RawConfig } from './schema.js';
import { optionalSecret } from './secret.js';
import { compileAdmin } from './sections/admin.js';
import { AUTHORIZATION_SERVER_PATHS, authorizationServerProblems, compileAuthorizationServer } from './sections/authorization-server.js';
import { compileCache } from './sections/cache.js';
import { compileConsent } from './sections/consent.js';
import { compileDecision } from './sections/decision.js';
import { compileLimits } from './sections/limits.js';
import { compileListen } from './sections/listen.js';
import { compileLog } from './sections/log.js';
import { compilePublicUrl, publicBase } from './sections/public-url.js';
import { compileRouteTable } from './sections/routes/route-table.js';
import { compileShutdown } from './sections/shutdown.js';
import { compileTelemetry } from './sections/telemetry.js';
import type { CompiledConfig } from './types.js';

export { broadestScopes, impliedScopes } from './sections/routes/policy.js';
export { WELL_KNOWN_PRM, metadataPathOf } from './sections/routes/route.js';

export type CompileResult = { config: CompiledConfig } | { problems: ConfigProblem[]; warnings: string[] };

/**
 * Runs each section's compile step and the checks across sections (cross-section.ts), then builds the frozen
 * `CompiledConfig`. `referencedPaths` lists the strings written as secret references, so literal secrets can be
 * warned about.
 */
export function compileConfig(raw: RawConfig, referencedPaths: ReadonlySet<string> = new Set()): CompileResult {
  const base = publicBase(raw);
  const authorizationServer = compileAuthorizationServer(raw.authorization_server, base);
  const routeTable = compileRouteTable(
    raw.routes,
    base,
    authorizationServer && {
      issuer: authorizationServer.issuer,
      jwksUri: authorizationServer.issuer + AUTHORIZATION_SERVER_PATHS.jwks,
      publicKeys: authorizationServer.publicKeys,
      accessTokenTtl: authorizationServer.accessTokenTtl,
    },
  );
  // In the order check-config has always printed them (tests compare whole lists).
  const problems = [
    ...insecureHttpProblems(raw),
    ...routeTable.problems,
    ...listenerPortProblems(raw),
    ...consentProblems(raw),
    ...authorizationServerProblems(raw.authorization_server, raw.public_url),
    ...authorizationServerRouteProblems(raw),
  ];
  const warnings = [...crossSectionWarnings(raw, referencedPaths), ...routeTable.warnings];
  // Warnings beside the problems: a user fixing the file sees everything check-config found in one pass.
  if (problems.length > 0) return { problems, warnings };

  const config: CompiledConfig = {
    listen: compileListen(raw.listen),
    admin: compileAdmin(raw.admin),
    decision: compileDecision(raw.decision),
    shutdown: compileShutdown(raw.shutdown),
    ...compilePublicUrl(raw),
    ...routeTable.settings,
    cache: compileCache(raw.cache),
    consent: compileConsent(raw.consent, raw.routes),
    authorizationServer,
    limits: compileLimits(raw.limits),
    signingKey: optionalSecret(raw.signing_key),
    ...compileLog(raw.log),
    telemetry: compileTelemetry(raw.telemetry),
    warnings,
  };
  return { config: deepFreeze(config) };
}
