import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkAuthorizationResponse } from '../../../src/client/authorization-response.js';
import { startRedirectListener, type ExpectOptions, type RedirectListener } from '../../../src/client/loopback-redirect.js';

let listener: RedirectListener;
beforeEach(async () => {
  listener = await startRedirectListener();
});
afterEach(() => listener.close());

const server = {
  server: 'https://as.example.com',
  metadata: { issuer: 'https://as.example.com', authorization_endpoint: 'https://as.example.com/authorize', token_endpoint: 'https://as.example.com/token', response_types_supported: ['code'] },
  tried: [],
};

/** How `login` checks a response to its sign-in with `state`. */
function waitFor(state: string, timeoutMs = 10_000, signal?: AbortSignal): ExpectOptions {
  return { timeoutMs, signal, check: (parameters) => checkAuthorizationResponse(server, 'client', state, parameters) };
}

async function redirect(query: Record<string, string>): Promise<{ status: number; body: string }> {
  const url = new URL(listener.redirectUri);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

describe('loopback redirect listener (RFC 8252 §7.3)', () => {
  it('listens on 127.0.0.1 at /callback', () => {
    expect(listener.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  });

  it('hands the code of the response with the expected state to the waiting flow; the page never shows it', async () => {
    const response = listener.expect('s1', waitFor('s1'));
    const page = await redirect({ code: 'the-code', state: 's1' });
    expect(await response).toEqual({ code: 'the-code' });
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('the-code');
  });

  it('G8: a response with another state or none gets an error page and is discarded; the wait goes on for the right one', async () => {
    const response = listener.expect('s1', waitFor('s1'));
    const forged: Record<string, string>[] = [{ code: 'forged', state: 'other' }, { code: 'forged' }, { error: 'access_denied', state: 'other' }];
    for (const query of forged) {
      const page = await redirect(query);
      expect(page.status).toBe(400);
      expect(page.body).toContain('does not belong to the sign-in in progress');
    }
    await redirect({ code: 'the-code', state: 's1' });
    expect(await response).toEqual({ code: 'the-code' });
  });

  it('G8: at its time limit after discarded responses, it says how many it discarded', async () => {
    const response = listener.expect('s1', waitFor('s1', 2_000));
    const refused = expect(response).rejects.toThrow('no authorization response within 2 s (1 with a missing or different state discarded)');
    expect((await redirect({ code: 'forged', state: 'other' })).status).toBe(400);
    await refused;
  });

  it.each([
    ['an error response', { error: 'access_denied', state: 's1' }, 'refused: access_denied'],
    ['an unprintable error code', { error: 'bad"\u0007', state: 's1' }, '(unprintable error code)'],
    ['no code', { state: 's1' }, 'carries no code'],
    ['an iss naming another server', { code: 'c', state: 's1', iss: 'https://evil.example.com' }, 'unexpected "iss"'],
  ])('rejects %s with the expected state, and its page says so', async (_name, query, message) => {
    const refused = expect(listener.expect('s1', waitFor('s1'))).rejects.toThrow(message);
    const page = await redirect(query);
    await refused;
    expect(page.status).toBe(400);
    expect(page.body).toContain('The authorization response was refused. See the command line.');
  });

  it('answers 409 when no sign-in waits, 404 elsewhere', async () => {
    expect((await redirect({ code: 'c', state: 's' })).status).toBe(409);
    expect((await fetch(new URL('/other', listener.redirectUri))).status).toBe(404);
  });

  it('gives up at its time limit, or when abandoned', async () => {
    await expect(listener.expect('s1', waitFor('s1', 1))).rejects.toThrow('no authorization response within');
    const abandon = new AbortController();
    const response = listener.expect('s2', waitFor('s2', 10_000, abandon.signal));
    abandon.abort();
    await expect(response).rejects.toThrow('abandoned');
  });
});
