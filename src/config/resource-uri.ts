import { domainToASCII } from 'node:url';

/**
 * The normal form `policy.resources` keys and requested resource URIs are compared in
 * (test/unit/config/resource-uri.test.ts; the spellings an upstream serves one resource under, in
 * test/security/policy.test.ts). MCP servers look resources up after parsing the URI (the official SDK keys them by
 * `new URL(uri).toString()`; file servers resolve through `fileURLToPath`), so every spelling a server may resolve to
 * the same resource must meet the same policy. The form is deliberately broader than any one server's: two spellings
 * that collapse here only ever get the same, stricter policy.
 *
 * 1. WHATWG URL parsing, as servers do: leading/trailing C0 controls and spaces stripped, tabs and newlines removed,
 *    scheme (and special schemes' host) lowercased, IDNA, IPv4 forms (`0x7f.1`), default and empty port dropped,
 *    dot segments (also `%2e`) resolved, `\` as `/` in special schemes, `file://localhost/` as `file:///`.
 * 2. Beyond WHATWG (RFC 3986 §6.2.2 and what servers commonly do): Unicode NFC first; the host of any scheme
 *    lowercased, through IDNA and without trailing dots (`example.com.` is `example.com` in DNS); percent-encoded
 *    unreserved characters decoded and remaining escapes upper-cased; dot segments of opaque paths (`mcp:a/../b`)
 *    resolved; a trailing `/` dropped; `file:` paths compared case-insensitively (Windows and macOS file systems).
 * 3. What names a resource is its scheme, host, port and path: userinfo, query and fragment are dropped. Servers
 *    that dispatch on host and path ignore them, and so does `fileURLToPath` (`file:///secret.txt?x=1` is
 *    `/secret.txt`): a URI that differs from a policy key only there is held to that key's policy.
 *
 * A URI with no normal form: one that does not parse, and one whose host or path holds an encoded `/`, `\` or NUL
 * (`%2F`, `%5C`, `%00`) or a `\` the parser left as is (other schemes): servers that decode or split paths their own
 * way resolve those to other resources than the one the URI seems to name, so no policy can place them.
 */
export type ResourceUriForm = { readonly normal: string } | { readonly refused: 'not_a_uri' | 'ambiguous_separator' };

export function resourceUriForm(raw: string): ResourceUriForm {
  let url: URL;
  try {
    url = new URL(raw.normalize('NFC'));
  } catch {
    return { refused: 'not_a_uri' };
  }
  if (AMBIGUOUS_SEPARATOR.test(url.host + url.pathname)) return { refused: 'ambiguous_separator' };
  const hasAuthority = url.href.startsWith(`${url.protocol}//`);
  const authority = hasAuthority ? `//${host(url.hostname)}${url.port === '' ? '' : `:${url.port}`}` : '';
  let path = normalizeEscapes(url.pathname);
  if (!path.startsWith('/')) path = removeDotSegments(path);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (url.protocol === 'file:') path = normalizeEscapes(path.toLowerCase());
  return { normal: `${url.protocol}${authority}${path}` };
}

/** The normal form, or `undefined` when the URI has none (see `resourceUriForm`). */
export function normalizeResourceUri(raw: string): string | undefined {
  const form = resourceUriForm(raw);
  return 'normal' in form ? form.normal : undefined;
}

/** `%2F`, `%5C`, `%00` (any case), and a raw `\`, which WHATWG keeps in the paths of non-special schemes. */
const AMBIGUOUS_SEPARATOR = /%(?:2f|5c|00)|\\/i;

/** IDNA where it applies (special schemes' hosts already are; an opaque host may be a domain too), lowercased. */
function host(hostname: string): string {
  const ascii = domainToASCII(hostname) || hostname;
  return ascii.toLowerCase().replace(/\.+$/, '');
}

/** RFC 3986 §2.3 unreserved characters: an escape of one of these means the character itself. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

function normalizeEscapes(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(character) ? character : escape.toUpperCase();
  });
}

/** RFC 3986 §5.2.4 for a rootless (opaque) path, which WHATWG leaves as written. */
function removeDotSegments(path: string): string {
  const output: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '.') continue;
    if (segment === '..') output.pop();
    else output.push(segment);
  }
  return output.join('/');
}
