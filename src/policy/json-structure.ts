export type JsonStructureFinding = 'ok' | 'too_deep' | 'duplicate_keys';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** Index of the quote closing the JSON string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  // indexOf skips long string values natively; a quote preceded by an odd run of backslashes is escaped.
  let quote = text.indexOf('"', start + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return text.length;
}

/**
 * Finds what JSON.parse hides: an object repeating a key (JSON.parse keeps the last, other parsers the first —
 * a parser differential) and nesting deeper than `maxDepth`. `value` is what JSON.parse made of
 * `text`. One linear pass over the text, with an explicit stack so hostile nesting cannot exhaust the call stack,
 * counts the keys written; the parsed value keeps one per distinct key of each object, so fewer there means a
 * repeated key. Keys are compared as JSON.parse decodes them: `"a"` and `"\u0061"` collide, as for every parser.
 */
export function checkJsonStructure(text: string, value: unknown, maxDepth: number): JsonStructureFinding {
  // One entry per open container: true for an object, false for an array.
  const inObject: boolean[] = [];
  let expectKey = false;
  let keysWritten = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      if (expectKey) keysWritten += 1;
      expectKey = false;
      i = stringEnd(text, i);
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (inObject.length >= maxDepth) return 'too_deep';
      inObject.push(c === OPEN_OBJECT);
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      inObject.pop();
      expectKey = false;
    } else if (c === COMMA) {
      expectKey = inObject[inObject.length - 1] === true;
    }
  }
  return keysWritten === keysParsed(value) ? 'ok' : 'duplicate_keys';
}

/** The keys of every object in a parsed JSON value; its nesting was bounded by the scan before this recursion. */
function keysParsed(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let keys = 0;
  if (Array.isArray(value)) {
    for (const element of value) keys += keysParsed(element);
    return keys;
  }
  for (const key in value) keys += 1 + keysParsed((value as Record<string, unknown>)[key]);
  return keys;
}
