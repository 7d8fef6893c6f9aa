import { describe, expect, it } from 'vitest';
import { classifySpan, resourceLabels, SpanKind } from '../src/classify.ts';

const res = resourceLabels({
  'service.name': 'checkout',
  'host.name': 'node-17',
  'os.version': '4.15.0-36',
  'dependency.hyper': '0.13.1',
  'process.pid': 42,
});

describe('classifySpan', () => {
  it('keeps only cohort attributes of the resource', () => {
    expect(res).toEqual({
      service: 'checkout',
      host: 'node-17',
      attrs: { 'dependency.hyper': '0.13.1', 'os.version': '4.15.0-36' },
    });
  });
  it('names HTTP server requests by method and route', () => {
    const l = classifySpan(
      {
        name: 'GET',
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': 'GET', 'http.route': '/lookup' },
      },
      res,
    );
    expect(l).toEqual({
      service: 'checkout',
      op: 'request',
      view: 'server',
      name: 'GET /lookup',
      peer: '',
    });
  });
  it('takes the peer of client spans from peer.service, then server.address', () => {
    const a = classifySpan(
      {
        name: 'GET',
        kind: SpanKind.CLIENT,
        attributes: { 'http.method': 'GET', 'server.address': 'urlite.internal' },
      },
      res,
    );
    expect(a.view).toBe('client');
    expect(a.peer).toBe('urlite.internal');
    const b = classifySpan(
      {
        name: 'x',
        kind: SpanKind.PRODUCER,
        attributes: { 'peer.service': 'urlite', 'server.address': 'h' },
      },
      res,
    );
    expect(b.peer).toBe('urlite');
  });
  it('recognises spawn, fsync and unmount spans by name, and onset.op wins', () => {
    expect(
      classifySpan(
        { name: 'process.spawn', kind: 1, attributes: { 'process.executable.name': 'postgres' } },
        res,
      ),
    ).toMatchObject({ op: 'spawn', view: 'internal', name: 'postgres' });
    expect(
      classifySpan(
        { name: 'fdatasync', kind: 0, attributes: { 'file.directory': '/pg/wal' } },
        res,
      ),
    ).toMatchObject({ op: 'fsync', name: '/pg/wal' });
    expect(
      classifySpan(
        { name: 'umount', kind: 1, attributes: { 'fs.mountpoint': '/var/lib/overlay/x' } },
        res,
      ),
    ).toMatchObject({ op: 'unmount', name: '/var/lib/overlay/x' });
    expect(
      classifySpan(
        { name: 'GET', kind: 2, attributes: { 'onset.op': 'fsync', 'http.method': 'GET' } },
        res,
      ).op,
    ).toBe('fsync');
    expect(classifySpan({ name: 'compute', kind: 1, attributes: {} }, res).op).toBe('other');
  });
});
