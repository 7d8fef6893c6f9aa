import { describe, expect, it } from 'vitest';
import { cleanText, cutAt, isUnstorable, textDigest } from '../src/text/sanitize.ts';
import { findUnstorableText } from '../src/http/text-guard.ts';
import { int64ToNumber } from '../src/otlp/values.ts';

describe('text PostgreSQL can store', () => {
  it('replaces NUL and lone surrogates with U+FFFD and keeps pairs', () => {
    expect(cleanText('a\u0000b', 100)).toBe('a\uFFFDb');
    expect(cleanText('\ud800x\udc00', 100)).toBe('\uFFFDx\uFFFD');
    expect(cleanText('\udc00\ud800', 100)).toBe('\uFFFD\uFFFD'); // reversed halves are two lone ones
    expect(cleanText('ok \ud83d\ude80', 100)).toBe('ok \ud83d\ude80');
  });

  it('cuts without splitting a surrogate pair', () => {
    expect(cutAt('ab\ud83d\ude80', 3)).toBe('ab');
    expect(cutAt('ab\ud83d\ude80', 4)).toBe('ab\ud83d\ude80');
    expect(cleanText('x'.repeat(300), 256)).toHaveLength(256);
  });

  it('tells storable text from unstorable', () => {
    expect(isUnstorable('plain \ud83d\ude80 \uFFFD')).toBe(false);
    expect(isUnstorable('\u0000')).toBe(true);
    expect(isUnstorable('a\udfff')).toBe(true);
    expect(isUnstorable('\ud800')).toBe(true);
  });

  it('names the field that holds unstorable text, keys included', () => {
    expect(findUnstorableText({ a: { b: ['ok', 'x\u0000'] } }, 'body')).toMatch(
      /^body\/a\/b\/1 contains a NUL/,
    );
    expect(findUnstorableText({ ['k\ud800']: 1 }, 'body')).toMatch(/^a key in body contains/);
    expect(findUnstorableText({ a: 'fine' }, 'querystring')).toBeNull();
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = { d: deep }; // no stack overflow
    expect(findUnstorableText(deep, 'body')).toMatch(/nested more than 32 levels/);
  });

  it('digests are fixed-size and stable', () => {
    expect(textDigest('x'.repeat(100_000))).toMatch(/^[0-9a-f]{64}$/);
    expect(textDigest('a')).toBe(textDigest('a'));
  });
});

describe('int64 from protobuf', () => {
  it('keeps the sign of signed values and the magnitude of unsigned ones', () => {
    expect(int64ToNumber({ low: -1, high: -1, unsigned: false })).toBe(-1);
    expect(int64ToNumber({ low: -1, high: -1, unsigned: true })).toBe(2 ** 64 - 1);
    expect(int64ToNumber({ low: 5, high: 0, unsigned: false })).toBe(5);
    expect(int64ToNumber('-42')).toBe(-42);
  });
});
