import { describe, expect, it } from 'vitest';
import { classifySpan, generatedPart, resourceLabels, templateName } from '../src/index.ts';

describe('templateName: un-templated request names get placeholders', () => {
  it('folds numeric ids, UUIDs, hex hashes and long opaque tokens', () => {
    expect(templateName('GET /users/12345')).toBe('GET /users/{id}');
    expect(templateName('GET /users/12345/orders/77')).toBe('GET /users/{id}/orders/{id}');
    expect(templateName('DELETE /orders/3fa85f64-5717-4562-b3fc-2c963f66afa6/items')).toBe(
      'DELETE /orders/{uuid}/items',
    );
    expect(templateName('GET /blobs/9f86d081884c7d659a2feaa0c55ad015')).toBe('GET /blobs/{hash}');
    expect(templateName('GET /s/eyJhbGciOiJIUzI1NiJ9')).toBe('GET /s/{token}');
    expect(templateName('/reset/Zm9vYmFyYmF6cXV4MTIzNDU2Nzg')).toBe('/reset/{token}');
    expect(templateName('GET /files/report-a8Fk2Q')).toBe('GET /files/report-{token}');
    expect(templateName('12345')).toBe('{id}');
  });

  it('drops the query string and fragment of a path', () => {
    expect(templateName('GET /search?q=shoes&page=2')).toBe('GET /search');
    expect(templateName('GET /docs/intro#install')).toBe('GET /docs/intro');
    expect(templateName('GET /users/42?x=1')).toBe('GET /users/{id}');
  });

  it('keeps names people chose', () => {
    for (const kept of [
      'GET /api/v1/users',
      'GET /users/{id}',
      'POST /v2/checkout',
      'SELECT orders',
      'process.spawn',
      'fsync',
      '/usr/lib/python3.11/site-packages',
      '/opt/node-v20.19.0/bin',
      'checkout-service',
      'span-000123',
      'GET /healthz',
      'what? /x',
      '/',
      '',
    ])
      expect(templateName(kept)).toBe(kept);
  });

  it('tells what kind of part it folded', () => {
    expect(generatedPart('4242')).toEqual({ kind: 'id', prefix: '' });
    expect(generatedPart('tmp.Xk3Fa9')).toEqual({ kind: 'token', prefix: 'tmp.' });
    expect(generatedPart('tmpk3j4h5_2')).toEqual({ kind: 'token', prefix: 'tmp' });
    expect(generatedPart('deadbeefcafe')).toEqual({ kind: 'hash', prefix: '' });
    expect(generatedPart('users')).toBeNull();
  });

  it('applies to span names before series resolution, never to a declared http.route', () => {
    const resource = resourceLabels({ 'service.name': 'api' });
    const untemplated = classifySpan(
      { name: 'GET /users/12345', kind: 2, attributes: { 'http.request.method': 'GET' } },
      resource,
    );
    expect(untemplated.name).toBe('GET /users/{id}');
    const other = classifySpan({ name: '/jobs/987/run', kind: 1, attributes: {} }, resource);
    expect(other.name).toBe('/jobs/{id}/run');
    const routed = classifySpan(
      {
        name: 'GET /reports/2024',
        kind: 2,
        attributes: { 'http.request.method': 'GET', 'http.route': '/reports/2024' },
      },
      resource,
    );
    expect(routed.name).toBe('GET /reports/2024');
  });
});
