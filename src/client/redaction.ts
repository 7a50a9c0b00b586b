/** Shorter values are not worth redacting and would mangle ordinary words. */
const MIN_SECRET_LENGTH = 4;

/**
 * The last line of defence for command output: every token, authorization code and client secret the command has
 * handled is replaced by `[redacted]` in anything it prints, in case an error message (from a library, or echoing
 * a server's answer) carries one. Messages are written never to contain them in the first place.
 */
export class Redactor {
  readonly #secrets = new Set<string>();

  add(secret: string | undefined): void {
    if (secret !== undefined && secret.length >= MIN_SECRET_LENGTH) this.#secrets.add(secret);
  }

  apply(text: string): string {
    let result = text;
    for (const secret of this.#secrets) {
      result = result.replaceAll(secret, '[redacted]').replaceAll(encodeURIComponent(secret), '[redacted]');
    }
    return result;
  }
}
