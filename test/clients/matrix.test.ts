import { describe, expect, it } from 'vitest';
import { COLUMNS, fail, notApplicable, parseCompatibility, pass, regressions, renderCompatibility, unfinishedRow, type Cell, type Column, type Row } from './matrix.js';

function row(client: string, overrides: Partial<Record<Column, Cell>> = {}, notes = ''): Row {
  const cells = Object.fromEntries(COLUMNS.map((column) => [column, pass()])) as Record<Column, Cell>;
  return { client, version: '1.2.3', cells: { ...cells, ...overrides }, notes };
}

describe('compatibility matrix', () => {
  it('renders a Markdown table and reads back every verdict, details and escaped pipes included', () => {
    const rows = [
      row('client | with pipe', { registration: pass('DCR'), 'step-up': notApplicable('scope held from the start') }),
      row('other', { sse: fail() }, 'multiply failed: "403 | again"'),
    ];
    const markdown = renderCompatibility(rows);
    expect(markdown).toContain('| client \\| with pipe | 1.2.3 | pass | pass (DCR) | pass | pass | pass | n.a. (scope held from the start) | pass | pass |');
    expect(markdown).toContain('- **other**: multiply failed: "403 | again"');
    const parsed = parseCompatibility(markdown);
    expect([...parsed.keys()]).toEqual(['client | with pipe', 'other']);
    expect(parsed.get('client | with pipe')?.get('step-up')).toBe('n.a.');
    expect(parsed.get('other')?.get('sse')).toBe('fail');
    expect(parsed.get('other')?.size).toBe(COLUMNS.length);
  });

  it('is deterministic: the same results give the same bytes', () => {
    expect(renderCompatibility([row('a')])).toBe(renderCompatibility([row('a')]));
  });

  it('a cell that passed and no longer passes is a regression; fail → pass and n.a. → pass are not', () => {
    const previous = parseCompatibility(renderCompatibility([row('a', { 'step-up': notApplicable() }), row('b', { sse: fail() })]));
    expect(regressions(previous, [row('a'), row('b')])).toEqual([]);
    expect(regressions(previous, [row('a', { token: fail('no token') }), row('b', { session: notApplicable() })])).toEqual([
      'a: token passed before, now fail (no token)',
      'b: session passed before, now n.a.',
    ]);
  });

  it('an n.a. cell that fails is a regression: the upfront_scopes rows are proven by their n.a. step-up (issue 12 gap 2)', () => {
    const upfront = (stepUp: Cell) => [row('sdk, upfront_scopes route', { 'step-up': stepUp })];
    const previous = parseCompatibility(renderCompatibility(upfront(notApplicable('scope held from the start'))));
    expect(regressions(previous, upfront(fail('did not authorize again for the challenged scope')))).toEqual([
      'sdk, upfront_scopes route: step-up was n.a. before, now fail (did not authorize again for the challenged scope)',
    ]);
  });

  it('a client that disappeared from the run loses every cell it passed or that did not apply', () => {
    const previous = parseCompatibility(renderCompatibility([row('gone', { sse: fail() })]));
    expect(regressions(previous, [])).toHaveLength(COLUMNS.length - 1);
    const withNotApplicable = parseCompatibility(renderCompatibility([row('gone', { sse: fail(), session: notApplicable() })]));
    expect(regressions(withNotApplicable, [])).toContain('gone: session was n.a. before, now missing');
  });

  it('a client the run deadline stopped fails every cell, so each one it passed or that did not apply regresses', () => {
    const previous = parseCompatibility(renderCompatibility([row('slow', { 'step-up': notApplicable(), sse: fail() })]));
    const stopped = unfinishedRow('slow', '1.2.3', 'did not finish within the run’s 300 s');
    expect(COLUMNS.map((column) => stopped.cells[column].verdict)).toEqual(COLUMNS.map(() => 'fail'));
    expect(regressions(previous, [stopped])).toHaveLength(COLUMNS.length - 1);
    expect(renderCompatibility([stopped])).toContain('- **slow**: did not finish within the run’s 300 s');
  });

  it('an empty or missing baseline has nothing to lose', () => {
    expect(regressions(parseCompatibility(''), [row('new', { token: fail() })])).toEqual([]);
  });

  it('the route-kinds table is read back too: a route kind that passed and now fails or is no longer run is a regression; one not run is no cell', () => {
    const withRoutes = (routes: Row['routes']) => ({ ...row('sdk'), routes });
    const markdown = renderCompatibility([withRoutes({ jwt: pass(), introspection: pass(), 'user-grant': pass('link in the error text') })]);
    expect(markdown).toContain('| sdk | pass | pass | *not run* | pass (link in the error text) |');
    const previous = parseCompatibility(markdown);
    expect(previous.get('sdk')?.get('route user-grant')).toBe('pass');
    expect(previous.get('sdk')?.has('route upfront')).toBe(false);
    expect(previous.get('sdk')?.size).toBe(COLUMNS.length + 3);
    expect(regressions(previous, [withRoutes({ jwt: pass(), introspection: pass(), 'user-grant': pass(), upfront: fail() })])).toEqual([]);
    expect(regressions(previous, [withRoutes({ jwt: pass(), 'user-grant': fail('no consent link shown') })])).toEqual([
      'sdk: route introspection passed before, now missing',
      'sdk: route user-grant passed before, now fail (no consent link shown)',
    ]);
  });
});
