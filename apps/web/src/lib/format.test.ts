import { describe, expect, it } from 'vitest';
import { safeHttpUrl } from './format.ts';

describe('links from CI', () => {
  it('only makes http(s) links', () => {
    expect(safeHttpUrl('https://ci.example/run/1')).toBe('https://ci.example/run/1');
    expect(safeHttpUrl('javascript:alert(1)')).toBeNull();
    expect(safeHttpUrl('data:text/html,x')).toBeNull();
    expect(safeHttpUrl('/relative')).toBeNull();
  });
});
