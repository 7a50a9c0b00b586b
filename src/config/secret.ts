import { inspect } from 'node:util';

const REDACTED = '[secret]';

/**
 * A resolved secret (upstream credential, client secret, cache key). Every way a value can reach a log line,
 * an error message or JSON prints a placeholder; only `reveal()` yields the value, at the point of use.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}

export function optionalSecret(value: string | undefined): Secret | undefined {
  return value === undefined ? undefined : new Secret(value);
}
