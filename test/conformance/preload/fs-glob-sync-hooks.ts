import type { ResolveHook } from 'node:module';

/** Only the conformance bundle's `fs` imports are redirected; everything else resolves as usual. */
const CONFORMANCE_PACKAGE = '/node_modules/@modelcontextprotocol/conformance/';
const FS_WITH_GLOB_SYNC = new URL('./fs-with-glob-sync.ts', import.meta.url).href;

export const resolve: ResolveHook = (specifier, context, nextResolve) => {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes(CONFORMANCE_PACKAGE)) {
    // Resolved by the rest of the chain, so the TypeScript loader registered before this hook handles it.
    return nextResolve(FS_WITH_GLOB_SYNC, context);
  }
  return nextResolve(specifier, context);
};
