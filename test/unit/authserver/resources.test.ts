import { describe, expect, it } from 'vitest';
import { createResourceRegistry } from '../../../src/authserver/resources.js';

const CALC = { resource: 'https://gw.example.com/calc/mcp', scopes: ['mcp:tools'] };

describe('createResourceRegistry', () => {
  const registry = createResourceRegistry([CALC, { resource: 'https://gw.example.com', scopes: [] }]);

  it.each([
    ['the exact URI', 'https://gw.example.com/calc/mcp', CALC.resource],
    ['an upper-case scheme and host', 'HTTPS://GW.EXAMPLE.COM/calc/mcp', CALC.resource],
    ['an explicit default port', 'https://gw.example.com:443/calc/mcp', CALC.resource],
    ['a root resource with its slash', 'https://gw.example.com/', 'https://gw.example.com'],
  ])('finds %s', (_name, indicator, expected) => {
    expect(registry.find(indicator)?.resource).toBe(expected);
  });

  it.each([
    ['another path', 'https://gw.example.com/calc/mcp/'],
    ['a different path case', 'https://gw.example.com/CALC/mcp'],
    ['a host prefix', 'https://gw.example.com.attacker.test/calc/mcp'],
    ['http instead of https', 'http://gw.example.com/calc/mcp'],
    ['a fragment', 'https://gw.example.com/calc/mcp#x'],
    ['a relative reference', '/calc/mcp'],
  ])('does not find %s', (_name, indicator) => {
    expect(registry.find(indicator)).toBeUndefined();
  });

  it.each([
    ['a relative URI', [{ resource: '/calc/mcp', scopes: [] }], 'resources[0].resource'],
    ['a fragment', [{ resource: 'https://gw.example.com/x#f', scopes: [] }], 'resources[0].resource'],
    ['a duplicate', [CALC, { ...CALC, resource: 'https://GW.example.com/calc/mcp' }], 'resources[1].resource'],
    ['a scope with a space', [{ ...CALC, scopes: ['mcp:tools', 'a b'] }], 'resources[0].scopes[1]'],
    ['a scope with a backslash', [{ ...CALC, scopes: ['a\\b'] }], 'resources[0].scopes[0]'],
    ['an empty scope', [{ ...CALC, scopes: [''] }], 'resources[0].scopes[0]'],
  ])('refuses %s, naming its path', (_name, resources, path) => {
    expect(() => createResourceRegistry(resources)).toThrow(path);
  });
});
