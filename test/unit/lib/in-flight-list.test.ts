import { describe, expect, it } from 'vitest';
import { InFlightList } from '../../../src/lib/in-flight-list.js';

describe('InFlightList', () => {
  it('lists what was added, newest first, and forgets what was removed from any position', () => {
    const list = new InFlightList<string>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((value) => list.add(value));
    expect([...list]).toEqual(['d', 'c', 'b', 'a']);
    list.remove(b!); // middle
    expect([...list]).toEqual(['d', 'c', 'a']);
    list.remove(d!); // first
    expect([...list]).toEqual(['c', 'a']);
    list.remove(a!); // last
    expect([...list]).toEqual(['c']);
    expect(list.size).toBe(1);
    list.remove(c!); // only
    expect([...list]).toEqual([]);
    expect(list.size).toBe(0);
    list.add('e');
    expect([...list]).toEqual(['e']);
  });

  it('ignores a second removal of the same entry (the list and its size stay right)', () => {
    const list = new InFlightList<number>();
    const one = list.add(1);
    list.add(2);
    list.remove(one);
    list.remove(one);
    expect([...list]).toEqual([2]);
    expect(list.size).toBe(1);
  });

  it('keeps no link from a removed entry to the list or its former neighbours (what the garbage collector needs)', () => {
    const list = new InFlightList<object>();
    list.add({});
    const middle = list.add({});
    list.add({});
    list.remove(middle);
    expect(middle.previous).toBeUndefined();
    expect(middle.next).toBeUndefined();
  });

  it('walks the entries as they were when the walk began, whatever is added or removed meanwhile', () => {
    const list = new InFlightList<string>();
    const entries = new Map(['a', 'b', 'c'].map((value) => [value, list.add(value)]));
    const seen: string[] = [];
    for (const value of list) {
      seen.push(value);
      if (value === 'c') {
        list.remove(entries.get('b')!);
        list.remove(entries.get('c')!);
        list.add('d');
      }
    }
    expect(seen).toEqual(['c', 'b', 'a']);
    expect([...list]).toEqual(['d', 'a']);
  });
});
