import type { UndiciHeaders } from 'undici/types/dispatcher.js';

/** Header pairs from any shape undici accepts (object, flat array, iterable of pairs). */
export function headerPairs(headers: UndiciHeaders | undefined): [string, string][] {
  if (headers === null || headers === undefined) return [];
  const pairs: [string, string][] = [];
  const add = (name: string, value: string | readonly string[] | undefined): void => {
    if (value === undefined) return;
    for (const item of typeof value === 'string' ? [value] : value) pairs.push([name, item]);
  };
  if (Array.isArray(headers)) {
    const flat = headers as readonly unknown[];
    for (let index = 0; index + 1 < flat.length; index += 2) add(String(flat[index]), String(flat[index + 1]));
  } else if (Symbol.iterator in headers) {
    for (const [name, value] of headers as Iterable<[string, string | string[] | undefined]>) add(name, value);
  } else {
    for (const [name, value] of Object.entries(headers)) add(name, value);
  }
  return pairs;
}

export interface BearerTarget {
  /** `http://host:port` of the gateway. */
  readonly origin: string;
  readonly token: string;
}

/**
 * The request's headers with `Authorization: Bearer <token>` added, when the request goes to the gateway's
 * origin, whatever Host it claims: the DNS rebinding scenario must be refused by the gateway's Host/Origin check
 * itself, not by a missing token. A request that already carries Authorization is left alone. Returns undefined
 * when nothing is to be added.
 */
export function withBearer(
  target: BearerTarget,
  requestOrigin: string | URL | undefined,
  headers: UndiciHeaders | undefined,
): [string, string][] | undefined {
  if (requestOrigin === undefined || new URL(String(requestOrigin)).origin !== target.origin) return undefined;
  const pairs = headerPairs(headers);
  const named = (name: string) => pairs.filter(([key]) => key.toLowerCase() === name).map(([, value]) => value);
  if (named('authorization').length > 0) return undefined;
  return [...pairs, ['authorization', `Bearer ${target.token}`]];
}
