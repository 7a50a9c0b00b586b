/**
 * The normal form `policy.resources` keys and requested resource URIs are compared in (checklist K1). MCP servers
 * look resources up after parsing the URI (the official SDK keys them by `new URL(uri).toString()`), so every
 * spelling a server may resolve to the same resource must meet the same policy. The form is deliberately broader
 * than any one server's: two spellings that collapse here only ever get the same, stricter policy.
 *
 * 1. WHATWG URL parsing, as servers do: leading/trailing C0 controls and spaces stripped, tabs and newlines removed,
 *    scheme (and special schemes' host) lowercased, IDNA, IPv4 forms (`0x7f.1`), default port dropped, dot segments
 *    (also `%2e`) resolved, `\` as `/` in special schemes, `file://localhost/` as `file:///`.
 * 2. Beyond WHATWG (RFC 3986 §6.2.2 and what servers commonly do): Unicode NFC first; the host of any scheme
 *    lowercased; percent-encoded unreserved characters decoded and remaining escapes upper-cased; dot segments of
 *    opaque paths (`mcp:a/../b`) resolved; fragment, empty query and a trailing `/` dropped; `file:` paths compared
 *    case-insensitively (Windows and macOS file systems are).
 *
 * `undefined` when the string is not a URI at all.
 */
export function normalizeResourceUri(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.normalize('NFC'));
  } catch {
    return undefined;
  }
  const hasAuthority = url.href.startsWith(`${url.protocol}//`);
  const authority = hasAuthority ? `//${userinfo(url)}${url.host.toLowerCase()}` : '';
  let path = normalizeEscapes(url.pathname);
  if (!path.startsWith('/')) path = removeDotSegments(path);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (url.protocol === 'file:') path = normalizeEscapes(path.toLowerCase());
  const query = url.search.length > 1 ? normalizeEscapes(url.search) : '';
  return `${url.protocol}${authority}${path}${query}`;
}

function userinfo(url: URL): string {
  if (url.username === '' && url.password === '') return '';
  return `${normalizeEscapes(url.username)}${url.password === '' ? '' : `:${normalizeEscapes(url.password)}`}@`;
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
