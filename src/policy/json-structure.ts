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
 * a parser differential, checklist F11) and nesting deeper than `maxDepth`. Expects text JSON.parse accepted.
 * One linear pass with an explicit stack, so hostile nesting cannot exhaust the call stack. Keys are compared
 * decoded, so `"a"` and `"\u0061"` collide as they do for every parser.
 */
export function checkJsonStructure(text: string, maxDepth: number): JsonStructureFinding {
  // One entry per open container: the keys seen so far for an object, null for an array.
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const keys = stack[stack.length - 1];
      if (expectKey && keys) {
        // A key without escapes is its own text; only an escaped one needs decoding.
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (keys.has(key)) return 'duplicate_keys';
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (stack.length >= maxDepth) return 'too_deep';
      stack.push(c === OPEN_OBJECT ? new Set() : null);
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
      expectKey = false;
    } else if (c === COMMA) {
      expectKey = stack[stack.length - 1] instanceof Set;
    }
  }
  return 'ok';
}
