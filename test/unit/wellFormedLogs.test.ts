import { describe, expect, it } from 'vitest';
import { topLevelKeys } from '../support/wellFormedLogs.ts';

describe("the log check's key reader", () => {
  it('lists top-level keys with their repeats, not nested keys, values or escaped quotes', () => {
    expect(topLevelKeys('{"a":1,"b":{"a":2,"c":[{"a":3}]},"d":"x\\":\\"a","a":"}"}')).toEqual(['a', 'b', 'd', 'a']);
    expect(topLevelKeys('{"name":"stack","component":"gateway","component":"access"}')).toEqual(['name', 'component', 'component']);
  });
});
