import { describe, expect, it } from 'vitest';
import { classifySpan, NO_ROUTE, resourceLabels, SpanKind } from '../src/classify.ts';

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

  describe('spans as the official SDKs send them', () => {
    const client = (name: string, attributes: Record<string, string | number>) =>
      classifySpan({ name, kind: SpanKind.CLIENT, attributes }, res);
    it("names Python requests' bare GET (old HTTP conventions) by its URL's path, templated, with the URL's host as peer", () => {
      expect(
        client('GET', {
          'http.method': 'GET',
          'http.url': 'http://api.internal:8080/items/42?verbose=1',
          'http.status_code': 200,
        }),
      ).toMatchObject({ op: 'request', name: 'GET /items/{id}', peer: 'api.internal' });
    });
    it("names Go otelhttp's `HTTP GET` by url.full's path, peer server.address", () => {
      expect(
        client('HTTP GET', {
          'http.request.method': 'GET',
          'url.full': 'http://127.0.0.1:9000/orders/981',
          'server.address': '127.0.0.1',
        }),
      ).toMatchObject({ op: 'request', name: 'GET /orders/{id}', peer: '127.0.0.1' });
    });
    it('names an old-convention server span by http.target without its query', () => {
      expect(
        classifySpan(
          {
            name: 'GET',
            kind: SpanKind.SERVER,
            attributes: { 'http.method': 'GET', 'http.target': '/items/42?q=1' },
          },
          res,
        ),
      ).toMatchObject({ op: 'request', view: 'server', name: 'GET /items/{id}', peer: '' });
    });
    it('reads any absolute URL as WHATWG URL would: credentials, IPv6, port, case, fragment, no path', () => {
      const cases: Array<[string, string, string]> = [
        [
          'https://user:pw@Pay.Example.com:8443/v1/charges/7#x',
          'POST /v1/charges/{id}',
          'pay.example.com',
        ],
        [
          'http://[::1]:8080/stock/3fa85f64-5717-4562-b3fc-2c963f66afa6',
          'POST /stock/{uuid}',
          '[::1]',
        ],
        ['http://stock?x=1', 'POST /', 'stock'],
        ['https://api.example.com', 'POST /', 'api.example.com'],
      ];
      for (const [url, name, peer] of cases) {
        expect(client('POST', { 'http.method': 'POST', 'http.url': url }), url).toMatchObject({
          name,
          peer,
        });
        expect(new URL(url).hostname).toBe(peer);
      }
      // Not an absolute URL: no path or peer is made up from it.
      expect(client('GET', { 'http.method': 'GET', 'http.url': '/relative/1' })).toMatchObject({
        name: `GET ${NO_ROUTE}`,
        peer: '',
      });
    });
    it('takes the peer from net.peer.name (old conventions)', () => {
      expect(client('GET', { 'http.method': 'GET', 'net.peer.name': 'stock' }).peer).toBe('stock');
    });
    it('keeps a declared route, and a span name that is more than its method', () => {
      expect(
        client('GET', {
          'http.method': 'GET',
          'http.route': '/items/{id}',
          'http.url': 'http://x/items/1',
        }),
      ).toMatchObject({ name: 'GET /items/{id}' });
      expect(
        client('GET /users/12345', { 'http.request.method': 'GET', 'url.full': 'http://x/other' }),
      ).toMatchObject({ name: 'GET /users/{id}' });
    });
    it("takes a client span's url.template as its route", () => {
      expect(
        client('GET', {
          'http.request.method': 'GET',
          'url.template': '/items/{id}',
          'url.full': 'http://x/items/7',
        }).name,
      ).toBe('GET /items/{id}');
    });
    it('a bare method with no URL or peer at all is never named by the method alone (issue 34)', () => {
      expect(client('GET', { 'http.request.method': 'GET' }).name).toBe(`GET ${NO_ROUTE}`);
    });
    it('names RPC calls service/method (old rpc.service + rpc.method, or a full rpc.method)', () => {
      expect(
        client('shop.Cart/Add', {
          'rpc.system': 'grpc',
          'rpc.service': 'shop.Cart',
          'rpc.method': 'Add',
        }),
      ).toMatchObject({ op: 'request', name: 'shop.Cart/Add' });
      expect(client('x', { 'rpc.system': 'grpc', 'rpc.method': 'shop.Cart/Add' }).name).toBe(
        'shop.Cart/Add',
      );
    });
    it('names database calls by their query summary or operation and table, old and new conventions', () => {
      expect(
        client('SELECT shop.orders', {
          'db.system': 'postgresql',
          'db.operation': 'SELECT',
          'db.sql.table': 'orders',
          'db.statement': 'SELECT * FROM orders WHERE id = 42',
        }),
      ).toMatchObject({ op: 'request', name: 'SELECT orders' });
      expect(
        client('SELECT orders', {
          'db.system.name': 'postgresql',
          'db.query.summary': 'SELECT orders',
          'server.address': 'db-1',
        }),
      ).toMatchObject({ op: 'request', name: 'SELECT orders', peer: 'db-1' });
    });
  });
});

describe('a span that says only its method and has no URL', () => {
  const res = { service: 'web', host: 'h', attrs: {} };
  it('is named after its peer (client) or its own address (server), never the bare method', () => {
    const c = classifySpan(
      {
        name: 'GET',
        kind: SpanKind.CLIENT,
        attributes: { 'http.method': 'GET', 'net.peer.name': 'inventory' },
      },
      res,
    );
    expect(c).toMatchObject({ view: 'client', name: 'GET inventory', peer: 'inventory' });
    const s = classifySpan(
      {
        name: 'HTTP POST',
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': 'POST', 'server.address': 'api.internal:8080' },
      },
      res,
    );
    expect(s).toMatchObject({ view: 'server', name: 'POST api.internal', peer: '' });
    const old = classifySpan(
      {
        name: 'GET',
        kind: SpanKind.SERVER,
        attributes: { 'http.method': 'GET', 'http.host': '127.0.0.1:37315' },
      },
      res,
    );
    expect(old.name).toBe('GET 127.0.0.1');
    const nothing = classifySpan(
      { name: 'GET', kind: SpanKind.CLIENT, attributes: { 'http.method': 'GET' } },
      res,
    );
    expect(nothing.name).toBe(`GET ${NO_ROUTE}`);
    for (const x of [c, s, old, nothing]) expect(x.name).not.toMatch(/^(HTTP )?[A-Z]+$/);
  });
});
