import { describe, expect, it } from 'vitest';
import {
  cacheLifetimeSeconds,
  hasRequiredDocumentFields,
  isLoopbackClientIdUrl,
  parseClientMetadataDocument,
} from '../../../src/authserver/client-metadata-document.js';

const URL_ID = 'http://127.0.0.1:4000/oauth/client.json';

function document(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({ client_id: URL_ID, client_name: 'Client', redirect_uris: ['http://127.0.0.1:9/cb'], ...overrides });
}

function errorOf(fn: () => unknown): { error?: unknown; error_description?: unknown } {
  try {
    fn();
  } catch (error) {
    return error as { error?: unknown; error_description?: unknown };
  }
  throw new Error('expected an error');
}

describe('isLoopbackClientIdUrl', () => {
  it.each([URL_ID, 'http://localhost:4000/client', 'http://[::1]:4000/client.json', 'http://127.0.0.1/a?b=c'])(
    'accepts %s',
    (id) => {
      expect(isLoopbackClientIdUrl(id)).toBe(true);
    },
  );

  it.each([
    ['https (left to the built-in support)', 'https://127.0.0.1:4000/client.json'],
    ['a public host', 'http://client.example.com/client.json'],
    ['a private address', 'http://10.1.2.3/client.json'],
    ['no path', 'http://127.0.0.1:4000'],
    ['the root path', 'http://127.0.0.1:4000/'],
    ['a dot segment', 'http://127.0.0.1:4000/a/../client.json'],
    ['an encoded dot segment', 'http://127.0.0.1:4000/a/%2e%2e/client.json'],
    ['an upper-case host', 'http://LOCALHOST:4000/client.json'],
    ['a default port spelled out', 'http://127.0.0.1:80/client.json'],
    ['a fragment', 'http://127.0.0.1:4000/client.json#x'],
    ['userinfo', 'http://user@127.0.0.1:4000/client.json'],
    ['not a URL', 'my-client'],
  ])('refuses %s', (_name, id) => {
    expect(isLoopbackClientIdUrl(id)).toBe(false);
  });
});

describe('parseClientMetadataDocument', () => {
  it('returns the document of a valid client', () => {
    expect(parseClientMetadataDocument(URL_ID, document({ logo_uri: 'https://x.example/logo.png' }))).toMatchObject({
      client_id: URL_ID,
      client_name: 'Client',
      redirect_uris: ['http://127.0.0.1:9/cb'],
    });
  });

  it.each([
    ['not JSON', '{'],
    ['a JSON array', '[]'],
    ['JSON null', 'null'],
    ['a JSON string', '"client"'],
    ['another client_id', document({ client_id: 'http://127.0.0.1:4000/other.json' })],
    ['a client_id with a trailing slash', document({ client_id: `${URL_ID}/` })],
    ['no client_id', document({ client_id: undefined })],
    ['no client_name', document({ client_name: undefined })],
    ['a blank client_name', document({ client_name: '  ' })],
    ['a numeric client_name', document({ client_name: 7 })],
    ['no redirect_uris', document({ redirect_uris: undefined })],
    ['empty redirect_uris', document({ redirect_uris: [] })],
    ['a non-string redirect URI', document({ redirect_uris: [1] })],
    ['a client_secret', document({ client_secret: 'x' })],
    ['a client_secret_expires_at', document({ client_secret_expires_at: 0 })],
    ['client_secret_basic', document({ token_endpoint_auth_method: 'client_secret_basic' })],
    ['client_secret_post', document({ token_endpoint_auth_method: 'client_secret_post' })],
    ['client_secret_jwt', document({ token_endpoint_auth_method: 'client_secret_jwt' })],
  ])('refuses a document with %s as invalid_client_metadata', (_name, body) => {
    const error = errorOf(() => parseClientMetadataDocument(URL_ID, body));
    expect(error.error).toBe('invalid_client_metadata');
    expect(String(error.error_description)).not.toContain('127.0.0.1');
  });
});

describe('hasRequiredDocumentFields', () => {
  it.each([
    [{ client_name: 'A', redirect_uris: ['https://a.example/cb'] }, true],
    [{ client_name: undefined, redirect_uris: ['https://a.example/cb'] }, false],
    [{ client_name: 'A', redirect_uris: [] }, false],
    [{ client_name: 'A', redirect_uris: 'https://a.example/cb' }, false],
  ])('%j → %s', (metadata, expected) => {
    expect(hasRequiredDocumentFields(metadata)).toBe(expected);
  });
});

describe('cacheLifetimeSeconds', () => {
  it.each([
    [null, 0],
    ['max-age=120', 120],
    ['public, max-age=60', 60],
    ['Max-Age=30', 30],
    ['max-age=999999', 3600],
    ['max-age=0', 0],
    ['no-store', 0],
    ['max-age=600, no-cache', 0],
    ['private', 0],
    ['max-age=-5', 0],
    ['max-age=abc', 0],
  ])('%s → %i s', (header, seconds) => {
    expect(cacheLifetimeSeconds(header)).toBe(seconds);
  });
});
