import type { Check, CheckStatus } from './check.js';
import type { Redactor } from './redaction.js';

export interface Report {
  readonly url: string;
  readonly checks: readonly Check[];
}

const LABELS: Record<CheckStatus, string> = { pass: 'PASS', warn: 'WARN', fail: 'FAIL' };

/** Control characters from a server (in a URL or a parameter it sent back) never reach the terminal. */
export function printable(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029]/gu, '?');
}

/**
 * The messages with every secret the command handled replaced, while still raw: once rendered, the table's `?` for
 * a control character or JSON's `\n` would change a secret so that it no longer matches.
 */
function redacted(report: Report, redactor: Redactor): Report {
  return { url: report.url, checks: report.checks.map((check) => ({ ...check, message: redactor.apply(check.message) })) };
}

/** One line per check: status, id, message and, in brackets, the clause; then the totals. */
export function renderTable(raw: Report, redactor: Redactor): string {
  const report = redacted(raw, redactor);
  const width = Math.max(0, ...report.checks.map((check) => check.id.length));
  const lines = report.checks.map(
    (check) => `${LABELS[check.status]}  ${check.id.padEnd(width)}  ${printable(check.message)}  [${check.spec}]`,
  );
  const count = (status: CheckStatus) => report.checks.filter((check) => check.status === status).length;
  return [
    `probe ${printable(report.url)}`,
    ...lines,
    `${count('pass')} passed, ${count('warn')} warning(s), ${count('fail')} failed`,
    '',
  ].join('\n');
}

/** `{ "url", "checks": [{ id, status, message, spec }] }`. */
export function renderJson(raw: Report, redactor: Redactor): string {
  const report = redacted(raw, redactor);
  return `${JSON.stringify({ url: report.url, checks: report.checks }, null, 2)}\n`;
}
