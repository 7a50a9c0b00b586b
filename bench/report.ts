import type { ResultRow } from './results.js';
import { formatSpread, type RoundsSummary, type Spread } from './rounds.js';
import { NOT_MEASURED, type SpecialResults, type TargetResult } from './targets.js';

const MODE_LABELS: Readonly<Record<string, string>> = {
  c1: '1 conn',
  c64: '64 conn',
  r1000: '1000/s',
  r2000: '2000/s',
};

const show = (value: number | null | undefined, digits = 0): string =>
  value === null || value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);

function table(header: readonly string[], body: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...body.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column < 2 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(line)].join('\n');
}

/** The load rows as a fixed-width table (also used, fenced, in bench/README.md). */
export function formatRows(rows: readonly ResultRow[]): string {
  return table(
    ['scenario', 'mode', 'req/s', 'min–max', 'p50 µs', 'p99 µs', '×direct', '+p50 µs', 'CPU µs/req', 'derived', 'RSS MB'],
    rows.map((row) => [
      row.id,
      MODE_LABELS[row.mode] ?? row.mode,
      show(row.rps),
      `${show(row.range.rps[0])}–${show(row.range.rps[1])}`,
      show(row.p50_us),
      show(row.p99_us),
      row.id === row.baseline ? '' : show(row.ratio_vs_direct, 2),
      show(row.added_p50_us),
      show(row.cpu_us_per_req),
      show(row.derived_cpu_us_per_req),
      show(row.rss_mb),
    ]),
  );
}

/** The per-round figures and ratios the verdicts are taken from: median (min–max) over the rounds. */
export function formatRounds(rounds: RoundsSummary): string {
  const cell = (spread: Spread | undefined, unit: '×' | 'µs'): string => (spread ? formatSpread(spread, unit) : '–');
  const lines = [`Per round (${rounds.count} rounds; median, min–max):`];
  for (const [scenario, cpu] of Object.entries(rounds.cpuC64)) {
    lines.push(`  ${scenario.padEnd(18)} CPU at 64 conn ${cell(cpu, 'µs').padEnd(34)} added p50 at 1 conn ${cell(rounds.addedP50C1[scenario], 'µs')}`);
  }
  lines.push(`  jwt-reused ÷ ref-undici-pool: CPU ${cell(rounds.jwtCpuVsUndiciPool, '×')}, added p50 ${cell(rounds.jwtAddedP50VsUndiciPool, '×')}`);
  lines.push(`  jwt-reused ÷ ref-reply-from:  CPU ${cell(rounds.jwtCpuVsReplyFrom, '×')}, added p50 ${cell(rounds.jwtAddedP50VsReplyFrom, '×')}`);
  lines.push(`  introspection-hit ÷ jwt-reused: CPU ${cell(rounds.introspectionHitCpuVsJwt, '×')}; decision ÷ proxied jwt-reused: CPU ${cell(rounds.decisionCpuVsJwt, '×')}`);
  return lines.join('\n');
}

export function formatSpecial(special: SpecialResults): string {
  const lines: string[] = [];
  for (const run of special.kidStorm.runs) {
    lines.push(`unknown-kid storm: ${run.requests} requests (${show(run.rps)} req/s, statuses ${JSON.stringify(run.statuses)}), ${run.jwksFetches} JWKS fetch(es)`);
  }
  const stream = (via: string, checks: SpecialResults['sseStream']['direct']): void => {
    for (const check of checks) {
      const rate = check.events / (check.elapsedMs / 1000);
      lines.push(`SSE ${special.sseStream.events} events ${via}: ${check.events} received, ${check.inOrder ? 'in order' : 'OUT OF ORDER'}, ${show(check.elapsedMs)} ms (${show(rate)} events/s)`);
    }
  };
  stream('direct', special.sseStream.direct);
  stream('via gateway', special.sseStream.gateway);
  const open = special.sseOpen;
  if (open) {
    for (const [when, sample] of [['fresh gateway', open.fresh], ['after the load runs', open.afterLoad]] as const) {
      lines.push(`${open.streams} open SSE streams, ${when}: ${sample.opened} open, gateway RSS ${sample.rssBeforeMb} MB → ${sample.rssOpenMb} MB`);
    }
  }
  return lines.join('\n');
}

function verdict({ met, value }: TargetResult): string {
  if (met === null) return value === NOT_MEASURED ? '[ n/a ]' : '[ --- ]';
  return met ? '[ met ]' : '[ NOT ]';
}

export function formatTargets(targets: readonly TargetResult[]): string {
  return targets.map((target) => `${verdict(target)} ${target.target}: ${target.value}`).join('\n');
}

const PERCENTILES = [
  { key: 'p50_us', label: 'p50', color: '#1f4e79' },
  { key: 'p90_us', label: 'p90', color: '#2e75b6' },
  { key: 'p99_us', label: 'p99', color: '#9dc3e6' },
  { key: 'p999_us', label: 'p99.9', color: '#deebf7' },
] as const;

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Latency percentiles per row as nested horizontal bars on a log scale (p99.9 widest, p50 darkest): the whole
 * distribution of each scenario side by side with its direct baseline.
 */
export function renderSvg(rows: readonly ResultRow[], title: string): string {
  const labelWidth = 330;
  const plotWidth = 620;
  const rowHeight = 22;
  const top = 60;
  const values = rows.flatMap((row) => PERCENTILES.map((p) => row[p.key])).filter((value) => value > 0);
  const minExp = Math.floor(Math.log10(Math.max(1, Math.min(...values))));
  const maxExp = Math.ceil(Math.log10(Math.max(10, ...values)));
  const x = (us: number): number => labelWidth + ((Math.log10(Math.max(us, 10 ** minExp)) - minExp) / (maxExp - minExp)) * plotWidth;
  const height = top + rows.length * rowHeight + 40;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + plotWidth + 30}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  PERCENTILES.forEach((p, index) => {
    const lx = labelWidth + index * 90;
    parts.push(`<rect x="${lx}" y="30" width="14" height="12" fill="${p.color}" stroke="#555" stroke-width="0.5"/>`);
    parts.push(`<text x="${lx + 18}" y="40">${p.label}</text>`);
  });
  for (let exp = minExp; exp <= maxExp; exp += 1) {
    const gx = x(10 ** exp);
    const label = exp < 3 ? `${10 ** exp} µs` : exp < 6 ? `${10 ** (exp - 3)} ms` : `${10 ** (exp - 6)} s`;
    parts.push(`<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${height - 30}" stroke="#ccc"/>`);
    parts.push(`<text x="${gx}" y="${height - 14}" text-anchor="middle">${label}</text>`);
  }
  rows.forEach((row, index) => {
    const y = top + index * rowHeight;
    const name = `${row.id} · ${MODE_LABELS[row.mode] ?? row.mode}`;
    parts.push(`<text x="${labelWidth - 8}" y="${y + 14}" text-anchor="end">${escapeXml(name)}</text>`);
    for (const p of [...PERCENTILES].reverse()) {
      const width = Math.max(1, x(row[p.key]) - labelWidth);
      parts.push(`<rect x="${labelWidth}" y="${y + 3}" width="${width.toFixed(1)}" height="${rowHeight - 6}" fill="${p.color}" stroke="#555" stroke-width="0.5"><title>${escapeXml(`${name} ${p.label}: ${row[p.key]} µs`)}</title></rect>`);
    }
  });
  parts.push('</svg>');
  return parts.join('\n');
}
