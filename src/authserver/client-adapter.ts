import type { Adapter, AdapterFactory } from 'oidc-provider';
import { createMemoryAdapter } from 'oidc-provider/lib/adapters/memory_adapter.js';
import { isLoopbackClientIdUrl } from './client-metadata-document.js';
import type { ClientMetadataResolver } from './loopback-client-resolver.js';

/**
 * With a loopback resolver, the Client model's `find` answers loopback http client_id URLs from their metadata
 * documents; oidc-provider consults the adapter before its built-in (https-only) Client ID Metadata Document
 * support. Every other model and id is `factory`'s.
 */
export function withLoopbackClients(factory: AdapterFactory, resolveLoopbackClient?: ClientMetadataResolver): AdapterFactory {
  return (model) => {
    const base = factory(model);
    if (model !== 'Client' || resolveLoopbackClient === undefined) return base;
    const clients: Adapter = {
      find: (id) => (isLoopbackClientIdUrl(id) ? resolveLoopbackClient(id) : base.find(id)),
      upsert: (id, payload, expiresIn) => base.upsert(id, payload, expiresIn),
      findByUid: (uid) => base.findByUid(uid),
      findByUserCode: (userCode) => base.findByUserCode(userCode),
      consume: (id) => base.consume(id),
      destroy: (id) => base.destroy(id),
      revokeByGrantId: (grantId) => base.revokeByGrantId(grantId),
    };
    return clients;
  };
}

/** oidc-provider's own in-memory storage (one store per server), with loopback metadata documents when given. */
export function createAdapterFactory(clockToleranceSeconds: number, resolveLoopbackClient?: ClientMetadataResolver): AdapterFactory {
  return withLoopbackClients(createMemoryAdapter(clockToleranceSeconds), resolveLoopbackClient);
}
