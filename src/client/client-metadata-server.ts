import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';

export interface ClientMetadataServer {
  /** The document's URL, which is also the client_id. */
  readonly url: string;
  /** How many times the document was fetched. */
  readonly fetches: number;
  close(): Promise<void>;
}

const DOCUMENT_PATH = '/oauth/client-metadata.json';

/**
 * Serves a Client ID Metadata Document on 127.0.0.1 (a free port): `client_id` is the document's own URL, the
 * other fields are `metadata` (client_name and redirect_uris at least). Loopback http is accepted only by an
 * authorization server in development mode; production documents are served over https.
 */
export async function startClientMetadataServer(metadata: OAuthClientMetadata): Promise<ClientMetadataServer> {
  let fetches = 0;
  let body = '';
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== DOCUMENT_PATH) {
      response.writeHead(404).end();
      return;
    }
    fetches += 1;
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
    response.end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${DOCUMENT_PATH}`;
  body = JSON.stringify({ ...metadata, client_id: url });
  return {
    url,
    get fetches() {
      return fetches;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
