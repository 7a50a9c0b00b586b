import type { ResolveHook } from 'node:module';

/**
 * Only the conformance bundles' `fs` imports are redirected (the pinned release and the alpha installed as
 * `conformance-next`); everything else resolves as usual.
 */
const CONFORMANCE_PACKAGE = /\/node_modules\/(@modelcontextprotocol\/conformance|conformance-next)\//;
const FS_WITH_GLOB_SYNC = new URL('./fs-with-glob-sync.ts', import.meta.url).href;

export const resolve: ResolveHook = (specifier, context, nextResolve) => {
  if ((specifier === 'fs' || specifier === 'node:fs') && CONFORMANCE_PACKAGE.test(context.parentURL ?? '')) {
    // Resolved by the rest of the chain, so the TypeScript loader registered before this hook handles it.
    return nextResolve(FS_WITH_GLOB_SYNC, context);
  }
  return nextResolve(specifier, context);
};
