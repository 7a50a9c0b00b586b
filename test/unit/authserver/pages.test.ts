import { describe, expect, it } from 'vitest';
import { renderConsentPage, renderErrorPage, renderLoginPage } from '../../../src/authserver/pages.js';
import { escapeHtml } from '../../../src/lib/html.js';

const HOSTILE = `<img src=x onerror="alert('1')">&`;

describe('escapeHtml', () => {
  it('escapes every character that can open markup or an attribute', () => {
    expect(escapeHtml(HOSTILE)).toBe('&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;');
  });
});

describe('pages', () => {
  const consent = {
    uid: 'uid_1',
    clientName: HOSTILE,
    clientId: HOSTILE,
    redirectHost: 'app.example.com',
    redirectIsLoopback: false,
    resources: [HOSTILE],
    scopes: [HOSTILE],
  };

  it.each([
    ['consent', renderConsentPage(consent)],
    ['login', renderLoginPage('uid_1', HOSTILE)],
    ['error', renderErrorPage(HOSTILE, HOSTILE)],
  ])('the %s page contains no unescaped input', (_name, html) => {
    expect(html).not.toContain('<img');
    expect(html).not.toContain(`"alert`);
  });

  it('shows the redirect host and the approve and deny forms', () => {
    const html = renderConsentPage(consent);
    expect(html).toContain('<strong>app.example.com</strong>');
    expect(html).toContain('action="/interaction/uid_1/confirm"');
    expect(html).toContain('action="/interaction/uid_1/abort"');
    expect(html).not.toContain('Any local program');
  });

  it('warns when the redirect URI is on loopback', () => {
    expect(renderConsentPage({ ...consent, redirectIsLoopback: true })).toContain('Any local program can claim such an address');
  });
});
