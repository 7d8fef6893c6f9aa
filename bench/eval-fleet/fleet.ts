/**
 * A seeded fleet for the fleet replay (npm run eval:fleet): hosts in kernel
 * pools, services on them, the five incident kinds of product.md with drawn
 * numbers, rollouts (canary host first, then the rest), fleet kernel rollouts
 * that touch several services of which only some regress, unrelated deploys
 * near every onset, diurnal swings, bursts and services where nothing changes.
 *
 * The ground truth (`incidents`) lives here only: the replay sends spans and
 * deploy markers, and the scorer compares what the server reports with it.
 * Independent of the incident tests' fixtures (packages/testkit/src/incidents).
 */
import { Rng } from './rng.ts';

export const MIN = 60_000;
const DAY = 24 * 60 * MIN;

export interface FleetOptions {
  seed: number;
  services: number;
  hosts: number;
  /** Instances of each of the five incident kinds. */
  perKind: number;
  /** Minutes of history before the first change. */
  warmupMin: number;
  /** Minutes in which changes happen. */
  incidentMin: number;
  /** Quiet minutes at the end, after the last rollout's confirmation time. */
  tailMin: number;
  /** Multiplies every event rate. */
  rate: number;
  /** The data ends here (exclusive, on a minute). */
  endMs: number;
}

export const FULL_FLEET = {
  services: 56,
  hosts: 210,
  perKind: 3,
  warmupMin: 150,
  incidentMin: 210,
  tailMin: 30,
  rate: 1,
} as const;

export const SMALL_FLEET = {
  services: 16,
  hosts: 40,
  perKind: 1,
  warmupMin: 130,
  incidentMin: 75,
  tailMin: 10,
  rate: 1,
} as const;

export type Op = 'request' | 'spawn' | 'fsync' | 'unmount';
export type ServiceClass = 'incident' | 'bursty' | 'steady';
export type IncidentKind =
  'spawn-idle' | 'spawn-method' | 'fsync-per-file' | 'caller-only' | 'kernel-unmount';
export const INCIDENT_KINDS: readonly IncidentKind[] = [
  'spawn-idle',
  'spawn-method',
  'fsync-per-file',
  'caller-only',
  'kernel-unmount',
];

export interface SeriesSpec {
  /** `service|op|name` */
  id: string;
  service: string;
  op: Op;
  name: string;
  baseMs: number;
  sigma: number;
  /** Events per host-minute (own traffic; edge calls come on top). */
  rate: number;
  /** Span attributes of every event. */
  attrs: Record<string, string | number>;
}

export interface EdgeSpec {
  caller: string;
  callee: string;
  /** The callee's server series the call lands on. */
  calleeSeries: SeriesSpec;
  route: string;
  rate: number;
  netMs: number;
}

export interface ServiceSpec {
  name: string;
  cls: ServiceClass;
  pool: number;
  hosts: string[];
  version: string;
  /** The version at the start of the data (releases move `version` on). */
  initialVersion: string;
  deps: Record<string, string>;
  cohort: Record<string, string>;
  series: SeriesSpec[];
  diurnalAmp: number;
  diurnalPhase: number;
  /** Has overlay unmounts (a kernel rollout onto its hosts slows them). */
  overlay: boolean;
}

export interface HostSpec {
  name: string;
  pool: number;
  kernel: string;
}

/** A deploy marker to POST at `atMs`; `key` names it for the truth. */
export interface PlannedMarker {
  key: string;
  atMs: number;
  body: {
    kind: 'code' | 'dependency' | 'kernel' | 'config' | 'infra';
    service?: string;
    hosts?: string[];
    component?: string;
    from_version?: string;
    to_version?: string;
    description: string;
  };
}

/** One incident as the generator made it: what changed, where, when, and what must be reported. */
export interface Incident {
  id: string;
  kind: IncidentKind;
  /** The service whose regression this is. */
  service: string;
  /** Series (`service|op|name|peer`) on which the step shows; any view of them counts. */
  series: string[];
  /** First minute any of its hosts changed, and the last. */
  changeAtMs: number;
  lastChangeAtMs: number;
  /** Hosts feeding its series, and the ones that slowed down. */
  seriesHosts: string[];
  regressedHosts: string[];
  canary: boolean;
  /** Human summary of its numbers. */
  size: string;
  /** The rollout that caused it: its posted markers and what an inferred marker of it looks like. */
  cause: {
    markerKeys: string[];
    kind: PlannedMarker['body']['kind'];
    service: string | null;
    component: string | null;
    toVersion: string;
    hosts: string[];
  };
}

interface Effect {
  seriesId: string;
  hostAt: Map<string, number>;
  apply: (ms: number, rng: Rng) => number;
}

interface EdgeEffect {
  edge: EdgeSpec;
  calleeHostAt: Map<string, number>;
  addMs: number;
}

interface Burst {
  seriesId: string;
  fromMs: number;
  toMs: number;
  factor: number;
  host: string | null;
}

interface AttrChange {
  service: string | null;
  host: string;
  key: string;
  value: string;
  atMs: number;
}

export interface SpanOut {
  traceId: string;
  spanId: string;
  parentId: string | null;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  kind: 1 | 2 | 3;
  startMs: number;
  durMs: number;
  attrs: Record<string, string | number>;
}

export type SpanSink = (resource: Record<string, string>, span: SpanOut) => void;

const POOLS = [
  { prefix: 'a', kernel: '4.4.0-138-generic', next: '4.15.0-36-generic' },
  { prefix: 'b', kernel: '5.4.0-150-generic', next: '5.15.0-91-generic' },
  { prefix: 'c', kernel: '5.10.0-21-amd64', next: '6.1.0-13-amd64' },
  { prefix: 'd', kernel: '6.1.0-13-amd64', next: '6.6.15-amd64' },
  { prefix: 'e', kernel: '5.15.0-91-generic', next: '6.5.0-21-generic' },
  { prefix: 'f', kernel: '6.6.15-amd64', next: '6.8.0-31-generic' },
];

// prettier-ignore
const WORDS = [
  'amber', 'basil', 'cedar', 'delta', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'juniper',
  'kestrel', 'lumen', 'maple', 'nimbus', 'onyx', 'pepper', 'quartz', 'raven', 'sable', 'tundra',
  'umber', 'vesper', 'willow', 'xenon', 'yarrow', 'zephyr', 'aster', 'birch', 'cobalt', 'dune',
  'egret', 'flint', 'grove', 'heron', 'iris', 'jasper', 'koala', 'larch', 'moss', 'nectar', 'opal',
  'pine', 'quill', 'reef', 'slate', 'thistle', 'ursa', 'vale', 'wren', 'yew',
];

// prettier-ignore
const ROUTES = [
  '/v1/items', '/v1/users/{id}', '/checkout', '/search', '/healthz', '/v2/orders', '/feed',
  '/quote', '/login', '/report',
];

export class Fleet {
  readonly opts: FleetOptions;
  readonly t0: number;
  readonly tEnd: number;
  readonly hosts: HostSpec[] = [];
  readonly services: ServiceSpec[] = [];
  readonly edges: EdgeSpec[] = [];
  readonly markers: PlannedMarker[] = [];
  readonly incidents: Incident[] = [];
  private readonly effects: Effect[] = [];
  private readonly edgeEffects: EdgeEffect[] = [];
  private readonly bursts: Burst[] = [];
  private readonly changes: AttrChange[] = [];
  private readonly byName = new Map<string, ServiceSpec>();
  private readonly hostLoad = new Map<string, number>();
  /** Services that already have a release planned (one release each keeps versions in time order). */
  private readonly released = new Set<string>();
  private readonly rng: Rng;
  private words: string[];
  private timelines = new Map<string, { atMs: number; attrs: Record<string, string> }[]>();
  private idCounter = 0;
  private readonly idPrefix: string;

  constructor(opts: FleetOptions) {
    this.opts = opts;
    this.rng = new Rng(opts.seed * 7919 + 17);
    this.tEnd = Math.floor(opts.endMs / MIN) * MIN;
    this.t0 = this.tEnd - (opts.warmupMin + opts.incidentMin + opts.tailMin) * MIN;
    this.words = this.rng.shuffle(WORDS);
    this.idPrefix = (opts.seed >>> 0).toString(16).padStart(8, '0');
    this.build();
  }

  /** Every service's class, for the spurious-regression breakdown. */
  classOf(service: string): ServiceClass | undefined {
    return this.byName.get(service)?.cls;
  }

  /** Minutes of data, for spurious regressions per service-day. */
  get dataMinutes(): number {
    return (this.tEnd - this.t0) / MIN;
  }

  // ---------------------------------------------------------------- layout

  private build(): void {
    const o = this.opts;
    const r = this.rng;
    const pools = Math.max(2, Math.min(POOLS.length, Math.round(o.hosts / 50)));
    for (let i = 0; i < o.hosts; i++) {
      const pool = i % pools;
      const p = POOLS[pool]!;
      const n = Math.floor(i / pools);
      const name = `node-${p.prefix}${String(Math.floor(n / 16) + 1).padStart(2, '0')}-${String((n % 16) + 1).padStart(2, '0')}`;
      this.hosts.push({ name, pool, kernel: p.kernel });
      this.hostLoad.set(name, 0);
    }
    // One node-level daemon per pool: every host reports, and kernel rollouts touch it without slowing it.
    for (let p = 0; p < pools; p++) {
      const svc = this.service(`node-exporter-${POOLS[p]!.prefix}`, 'steady', p, -1);
      this.series(svc, 'request', 'GET /metrics', r.uniform(1.5, 5), 0.25, 0.6, {});
    }

    // Incident services, perKind of each kind, made before the fillers so they get spread hosts.
    // Kernel rollouts come in pairs (at least one pair): two services of one pool moved to the
    // same kernel within the hour, each regression must name its own hosts.
    const kernels = Math.max(o.perKind, 2);
    const kindPlans: (() => void)[] = [];
    const slots: number[] = [];
    const nIncidents = 4 * o.perKind + Math.ceil(kernels / 2);
    const tA = this.t0 + (o.warmupMin + 5) * MIN;
    const tB = this.tEnd - (o.tailMin + 40) * MIN;
    for (let i = 0; i < nIncidents; i++) {
      const frac = nIncidents === 1 ? 0.3 : i / (nIncidents - 1);
      slots.push(Math.floor((tA + frac * (tB - tA) + r.uniform(-4, 4) * MIN) / MIN) * MIN);
    }
    const slotOrder = r.shuffle(slots.map((_, i) => i));
    let s = 0;
    const nextSlot = () => Math.min(tB, Math.max(tA, slots[slotOrder[s++]!]!));
    for (let k = 0; k < o.perKind; k++) {
      const idle = this.makeSpawnIdle();
      const method = this.makeSpawnMethod();
      const fsync = this.makeFsync();
      const edge = this.makeCallerOnly();
      const at = [nextSlot(), nextSlot(), nextSlot(), nextSlot()];
      // Half of the service rollouts are canaries (one host, then the rest), alternating.
      kindPlans.push(() => this.planSpawnIdle(idle, at[0]!, k % 2 === 0));
      kindPlans.push(() => this.planSpawnMethod(method, at[1]!));
      kindPlans.push(() => this.planFsync(fsync, at[2]!, k % 2 === 1));
      kindPlans.push(() =>
        this.planCallerOnly(edge.caller, edge.callee, edge.edge, at[3]!, k % 2 === 0),
      );
    }
    const kernelTargets: { svc: ServiceSpec; at: number; pool: number }[] = [];
    for (let k = 0; k < kernels; k++) {
      const pair = k % 2 === 1 ? kernelTargets[kernelTargets.length - 1] : undefined;
      const pool = pair ? pair.pool : r.int(0, pools - 1);
      const kat = pair ? Math.min(tB, pair.at + Math.round(r.uniform(8, 40)) * MIN) : nextSlot();
      kernelTargets.push({ svc: this.makeOverlayService(pool, 'incident'), at: kat, pool });
    }

    const nBursty = Math.max(2, Math.round(o.services * 0.1));
    for (let i = 0; i < nBursty; i++) this.makeSteady('bursty');
    while (this.services.length < o.services) this.makeSteady('steady');
    // Hosts nobody runs on get a steady service (every host reports something).
    for (const h of this.hosts) {
      if ((this.hostLoad.get(h.name) ?? 0) > 0) continue;
      const svc = r.pick(
        this.services.filter((x) => x.cls === 'steady' && x.pool === h.pool && !x.overlay),
      );
      svc.hosts.push(h.name);
      this.hostLoad.set(h.name, 1);
    }
    this.makeEdges();

    for (const plan of kindPlans) plan();
    // The second rollout of each pair is not posted: Onset knows it only from telemetry.
    kernelTargets.forEach((k, i) =>
      this.planKernel(
        k.svc,
        k.at,
        kernelTargets.map((x) => x.svc),
        i % 2 === 0,
      ),
    );
    this.planNoise();
    this.buildTimelines();
  }

  private word(): string {
    const w = this.words.shift();
    if (w) return w;
    this.words = this.rng.shuffle(WORDS).map((x) => `${x}${this.services.length}`);
    return this.words.shift()!;
  }

  /** A service on `k` hosts of a pool (k = -1: all of them), least-loaded hosts first. */
  private service(name: string, cls: ServiceClass, pool: number, k: number): ServiceSpec {
    const r = this.rng;
    const inPool = this.hosts.filter((h) => h.pool === pool).map((h) => h.name);
    const ordered =
      k < 0
        ? inPool
        : r
            .shuffle(inPool)
            .sort((a, b) => this.hostLoad.get(a)! - this.hostLoad.get(b)!)
            .slice(0, k);
    // The daemon does not count as load: it is everywhere.
    if (k >= 0) for (const h of ordered) this.hostLoad.set(h, this.hostLoad.get(h)! + 1);
    const version = `${r.int(1, 4)}.${r.int(0, 30)}.${r.int(0, 9)}`;
    const svc: ServiceSpec = {
      name,
      cls,
      pool,
      hosts: ordered,
      version,
      initialVersion: version,
      deps: {},
      cohort: {},
      series: [],
      diurnalAmp: r.uniform(0.04, 0.25),
      diurnalPhase: r.uniform(0, 2 * Math.PI),
      overlay: false,
    };
    this.services.push(svc);
    this.byName.set(name, svc);
    return svc;
  }

  private series(
    svc: ServiceSpec,
    op: Op,
    name: string,
    baseMs: number,
    sigma: number,
    rate: number,
    attrs: Record<string, string | number>,
  ): SeriesSpec {
    const spec: SeriesSpec = {
      id: `${svc.name}|${op}|${name}`,
      service: svc.name,
      op,
      name,
      baseMs,
      sigma,
      rate: rate * this.opts.rate,
      attrs,
    };
    svc.series.push(spec);
    return spec;
  }

  private pools(): number {
    return new Set(this.hosts.map((h) => h.pool)).size;
  }

  private requestSeries(svc: ServiceSpec, n: number): SeriesSpec[] {
    const r = this.rng;
    return r
      .shuffle(ROUTES)
      .slice(0, n)
      .map((route) =>
        this.series(
          svc,
          'request',
          `GET ${route}`,
          r.uniform(2, 60),
          r.uniform(0.2, 0.45),
          r.uniform(1, 4),
          {
            'http.request.method': 'GET',
            'http.route': route,
          },
        ),
      );
  }

  private makeSpawnIdle(): ServiceSpec {
    const r = this.rng;
    const svc = this.service(
      `${this.word()}-pageserver`,
      'incident',
      r.int(0, this.pools() - 1),
      r.int(3, 7),
    );
    this.series(svc, 'spawn', 'postgres', r.uniform(120, 250), 0.2, r.uniform(2, 4), {});
    if (r.chance(0.5))
      this.series(svc, 'spawn', 'pg_ctl', r.uniform(60, 120), 0.2, r.uniform(1.5, 3), {});
    this.requestSeries(svc, 1);
    return svc;
  }

  private makeSpawnMethod(): ServiceSpec {
    const r = this.rng;
    const svc = this.service(
      `${this.word()}-builder`,
      'incident',
      r.int(0, this.pools() - 1),
      r.int(4, 8),
    );
    svc.cohort['onset.cohort.spawn_method'] = 'posix_spawn';
    this.series(svc, 'spawn', 'cc', r.uniform(0.035, 0.06), 0.15, r.uniform(3, 5), {});
    this.requestSeries(svc, 1);
    return svc;
  }

  private makeFsync(): ServiceSpec {
    const r = this.rng;
    const svc = this.service(
      `${this.word()}-postgres`,
      'incident',
      r.int(0, this.pools() - 1),
      r.int(2, 5),
    );
    const pg = r.pick(['14', '15', '16']);
    this.series(
      svc,
      'fsync',
      `/var/lib/postgresql/${pg}/main/pg_wal`,
      r.uniform(500, 1100),
      0.06,
      r.uniform(1, 2),
      {},
    );
    this.requestSeries(svc, 1);
    return svc;
  }

  private makeCallerOnly(): { caller: ServiceSpec; callee: ServiceSpec; edge: EdgeSpec } {
    const r = this.rng;
    const w = this.word();
    const callee = this.service(`${w}-lookup`, 'incident', r.int(0, this.pools() - 1), r.int(3, 6));
    callee.deps['dependency.hyper'] = '0.12.35';
    callee.deps['dependency.tokio'] = '0.2.25';
    const route = r.pick(['/lookup', '/resolve', '/v1/shorten', '/expand']);
    const calleeSeries = this.series(
      callee,
      'request',
      `GET ${route}`,
      r.uniform(0.4, 12),
      0.2,
      1,
      {
        'http.request.method': 'GET',
        'http.route': route,
      },
    );
    const caller = this.service(`${w}-web`, 'incident', r.int(0, this.pools() - 1), r.int(3, 6));
    this.requestSeries(caller, 1);
    const edge: EdgeSpec = {
      caller: caller.name,
      callee: callee.name,
      calleeSeries,
      route,
      rate: r.uniform(2, 4) * this.opts.rate,
      netMs: r.uniform(0.15, 0.6),
    };
    this.edges.push(edge);
    return { caller, callee, edge };
  }

  private makeOverlayService(pool: number, cls: ServiceClass): ServiceSpec {
    const r = this.rng;
    const svc = this.service(`${this.word()}-containerd`, cls, pool, r.int(5, 9));
    svc.overlay = true;
    this.series(
      svc,
      'unmount',
      '/run/containerd/io.containerd.runtime.v2.task/k8s.io/*/rootfs',
      r.uniform(5, 28),
      0.3,
      r.uniform(1.5, 3),
      { 'fs.type': 'overlay' },
    );
    this.series(svc, 'spawn', 'runc', r.uniform(8, 20), 0.25, r.uniform(1.5, 3), {});
    return svc;
  }

  private makeSteady(cls: ServiceClass): void {
    const r = this.rng;
    const pool = r.int(0, this.pools() - 1);
    const flavour = r.next();
    if (flavour < 0.55) {
      const svc = this.service(
        `${this.word()}-${r.pick(['api', 'svc', 'gateway', 'worker'])}`,
        cls,
        pool,
        r.int(2, 7),
      );
      this.requestSeries(svc, r.int(1, 3));
      if (r.chance(0.3)) svc.deps['dependency.openssl'] = '3.0.13';
    } else if (flavour < 0.7) {
      const svc = this.service(`${this.word()}-runner`, cls, pool, r.int(2, 6));
      this.series(
        svc,
        'spawn',
        r.pick(['python3', 'node', 'bash', 'java']),
        r.uniform(2, 40),
        0.3,
        r.uniform(1, 3),
        {},
      );
    } else if (flavour < 0.85) {
      const svc = this.service(`${this.word()}-store`, cls, pool, r.int(2, 4));
      this.series(
        svc,
        'fsync',
        `/srv/${svc.name}/journal`,
        r.uniform(0.5, 8),
        0.3,
        r.uniform(1, 3),
        {},
      );
      this.requestSeries(svc, 1);
    } else if (cls === 'steady') {
      this.makeOverlayService(pool, cls);
    } else {
      const svc = this.service(`${this.word()}-queue`, cls, pool, r.int(2, 5));
      this.requestSeries(svc, 2);
    }
  }

  /** Steady request services call each other (edges that never change). */
  private makeEdges(): void {
    const r = this.rng;
    const req = this.services.filter(
      (s) =>
        s.cls === 'steady' &&
        s.series.some((x) => x.op === 'request') &&
        !s.name.startsWith('node-exporter'),
    );
    for (
      let i = 0;
      i + 1 < req.length && this.edges.length < 4 + Math.round(this.opts.services / 8);
      i += 2
    ) {
      const caller = req[i]!;
      const callee = req[i + 1]!;
      const calleeSeries = callee.series.find((x) => x.op === 'request')!;
      this.edges.push({
        caller: caller.name,
        callee: callee.name,
        calleeSeries,
        route: String(calleeSeries.attrs['http.route']),
        rate: r.uniform(1, 3) * this.opts.rate,
        netMs: r.uniform(0.15, 1),
      });
    }
  }

  // ---------------------------------------------------------------- changes

  /** Rollout times: one host first when `canary`, the rest `gap` minutes later. */
  private rolloutTimes(hosts: string[], at: number, canary: boolean): Map<string, number> {
    // The rest 12–60 minutes after the canary (past the 30-minute growth window too), early
    // enough that a few passes see it before the quiet tail.
    const latest = this.tEnd - (this.opts.tailMin + 12) * MIN;
    const gap = Math.min(
      Math.round(this.rng.uniform(12, 60)) * MIN,
      Math.max(12 * MIN, Math.floor((latest - at) / MIN) * MIN),
    );
    const m = new Map<string, number>();
    hosts.forEach((h, i) => m.set(h, canary && i > 0 ? at + gap : at));
    return m;
  }

  private markerAt(at: number): number {
    // CI hooks post when the deploy step finishes: up to a minute and a half after the change.
    return at + Math.round(this.rng.uniform(0, 90)) * 1000;
  }

  /** Posted markers of one rollout: one per wave. */
  private rolloutMarkers(
    key: string,
    times: Map<string, number>,
    body: Omit<PlannedMarker['body'], 'hosts'>,
    hostScoped: boolean,
  ): string[] {
    const waves = new Map<number, string[]>();
    for (const [h, t] of times) waves.set(t, [...(waves.get(t) ?? []), h]);
    const keys: string[] = [];
    const sorted = [...waves.entries()].sort((a, b) => a[0] - b[0]);
    sorted.forEach(([t, hosts], i) => {
      const k = `${key}#${i}`;
      const scoped = hostScoped || sorted.length > 1;
      this.markers.push({
        key: k,
        atMs: this.markerAt(t),
        body: {
          ...body,
          ...(scoped ? { hosts } : {}),
          description: `${body.description}${sorted.length > 1 ? (i === 0 ? ' (canary)' : ' (rest of the fleet)') : ''}`,
        },
      });
      keys.push(k);
    });
    return keys;
  }

  private change(
    service: string | null,
    hostAt: Map<string, number>,
    key: string,
    value: string,
  ): void {
    for (const [host, atMs] of hostAt) this.changes.push({ service, host, key, value, atMs });
  }

  private bumpVersion(v: string): string {
    const [a, b, c] = v.split('.').map(Number);
    return this.rng.chance(0.3) ? `${a}.${b! + 1}.0` : `${a}.${b}.${c! + 1}`;
  }

  private truth(
    inc: Omit<Incident, 'id' | 'changeAtMs' | 'lastChangeAtMs' | 'seriesHosts'>,
    hostAt: Map<string, number>,
    seriesHosts: string[],
  ): void {
    const times = inc.regressedHosts.map((h) => hostAt.get(h)!).filter((t) => t !== undefined);
    this.incidents.push({
      id: `${inc.kind}:${inc.service}`,
      ...inc,
      seriesHosts,
      changeAtMs: Math.min(...times),
      lastChangeAtMs: Math.max(...times),
    });
  }

  /** Unrelated deploys around an onset: another service sharing a host, and an old config change of this one. */
  private unrelated(svc: ServiceSpec, at: number): void {
    const r = this.rng;
    const shared = this.services.filter(
      (o) =>
        o.cls !== 'incident' &&
        !this.released.has(o.name) &&
        o.name !== svc.name &&
        o.hosts.some((h) => svc.hosts.includes(h)) &&
        !o.name.startsWith('node-exporter'),
    );
    const pool = shared.length
      ? shared
      : this.services.filter(
          (o) =>
            o.cls === 'steady' && !this.released.has(o.name) && !o.name.startsWith('node-exporter'),
        );
    if (pool.length) {
      const other = r.pick(pool);
      const t = at + Math.round(r.uniform(-6, 6)) * MIN + r.int(0, 59) * 1000;
      const to = this.bumpVersion(other.version);
      this.change(other.name, new Map(other.hosts.map((h) => [h, t])), 'service.version', to);
      this.markers.push({
        key: `unrelated-release:${other.name}:${t}`,
        atMs: this.markerAt(t),
        body: {
          kind: 'code',
          service: other.name,
          from_version: other.version,
          to_version: to,
          description: `release ${to} of ${other.name}`,
        },
      });
      other.version = to;
      this.released.add(other.name);
    }
    const t = at - Math.round(r.uniform(30, 90)) * MIN;
    this.markers.push({
      key: `unrelated-config:${svc.name}:${t}`,
      atMs: t,
      body: {
        kind: 'config',
        service: svc.name,
        component: r.pick(['pool_size', 'log_level', 'cache_ttl']),
        description: `config change of ${svc.name}`,
      },
    });
  }

  /** 1. Spawn latency after a release that stops idle helpers (fork+exec with many fds to mark). */
  private planSpawnIdle(svc: ServiceSpec, at: number, canary: boolean): void {
    const r = this.rng;
    const hostAt = this.rolloutTimes(r.shuffle(svc.hosts), at, canary);
    const from = svc.version;
    const to = this.bumpVersion(from);
    this.change(svc.name, hostAt, 'service.version', to);
    const keys = this.rolloutMarkers(
      `spawn-idle:${svc.name}`,
      hostAt,
      {
        kind: 'code',
        service: svc.name,
        from_version: from,
        to_version: to,
        description: `release ${to}: stop idle helpers after 200 s`,
      },
      false,
    );
    const pIdle = r.uniform(0.4, 0.8);
    const fds = r.uniform(80_000, 250_000);
    const spawns = svc.series.filter((x) => x.op === 'spawn');
    for (const sp of spawns)
      this.effects.push({
        seriesId: sp.id,
        hostAt,
        apply: (ms, g) => (g.chance(pIdle) ? ms + fds * 0.011 * g.lognormal(1, 0.35) : ms),
      });
    this.truth(
      {
        kind: 'spawn-idle',
        service: svc.name,
        series: spawns.map((x) => `${x.id}|`),
        regressedHosts: svc.hosts,
        canary,
        size: `${Math.round(pIdle * 100)}% of spawns pay ${Math.round(fds / 1000)}k fds × 11 µs (${((fds * 0.011) / 1000).toFixed(1)} s) on ${spawns.length} executable(s)`,
        cause: {
          markerKeys: keys,
          kind: 'code',
          service: svc.name,
          component: null,
          toVersion: to,
          hosts: svc.hosts,
        },
      },
      hostAt,
      svc.hosts,
    );
    svc.version = to;
    this.unrelated(svc, at);
  }

  /** 2. A config change moves some hosts from posix_spawn to fork() with a big parent. */
  private planSpawnMethod(svc: ServiceSpec, at: number): void {
    const r = this.rng;
    const moved = r.shuffle(svc.hosts).slice(0, r.int(1, svc.hosts.length - 2));
    const hostAt = new Map(moved.map((h) => [h, at]));
    this.change(svc.name, hostAt, 'onset.cohort.spawn_method', 'fork');
    const key = `spawn-method:${svc.name}`;
    this.markers.push({
      key,
      atMs: this.markerAt(at),
      body: {
        kind: 'config',
        service: svc.name,
        hosts: moved,
        component: 'spawn_method',
        from_version: 'posix_spawn',
        to_version: 'fork',
        description: 'spawn helpers with fork()',
      },
    });
    const gb = r.uniform(0.5, 2);
    const sp = svc.series.find((x) => x.op === 'spawn')!;
    this.effects.push({ seriesId: sp.id, hostAt, apply: (_ms, g) => g.lognormal(gb * 7.6, 0.15) });
    this.truth(
      {
        kind: 'spawn-method',
        service: svc.name,
        series: [`${sp.id}|`],
        regressedHosts: moved,
        canary: false,
        size: `${(sp.baseMs * 1000).toFixed(0)} µs -> ${(gb * 7.6).toFixed(1)} ms on ${moved.length}/${svc.hosts.length} hosts`,
        cause: {
          markerKeys: [key],
          kind: 'config',
          service: svc.name,
          component: 'spawn_method',
          toVersion: 'fork',
          hosts: moved,
        },
      },
      hostAt,
      svc.hosts,
    );
    this.unrelated(svc, at);
  }

  /** 3. A release fsyncs the WAL directory after every deleted file. */
  private planFsync(svc: ServiceSpec, at: number, canaryWanted: boolean): void {
    const r = this.rng;
    const canary = canaryWanted && svc.hosts.length > 2;
    const hostAt = this.rolloutTimes(r.shuffle(svc.hosts), at, canary);
    const from = svc.version;
    const to = this.bumpVersion(from);
    this.change(svc.name, hostAt, 'service.version', to);
    const keys = this.rolloutMarkers(
      `fsync:${svc.name}`,
      hostAt,
      {
        kind: 'code',
        service: svc.name,
        from_version: from,
        to_version: to,
        description: `release ${to}: remove old WAL files one by one`,
      },
      false,
    );
    const ratio = r.uniform(2, 3.5);
    const sp = svc.series.find((x) => x.op === 'fsync')!;
    this.effects.push({ seriesId: sp.id, hostAt, apply: (ms) => ms * ratio });
    this.truth(
      {
        kind: 'fsync-per-file',
        service: svc.name,
        series: [`${sp.id}|`],
        regressedHosts: svc.hosts,
        canary,
        size: `${(sp.baseMs / 1000).toFixed(2)} s -> ${((sp.baseMs * ratio) / 1000).toFixed(2)} s (×${ratio.toFixed(1)})`,
        cause: {
          markerKeys: keys,
          kind: 'code',
          service: svc.name,
          component: null,
          toVersion: to,
          hosts: svc.hosts,
        },
      },
      hostAt,
      svc.hosts,
    );
    svc.version = to;
    this.unrelated(svc, at);
  }

  /** 4. The callee bumps hyper: its own latency is flat, its callers see +40 ms. */
  private planCallerOnly(
    caller: ServiceSpec,
    callee: ServiceSpec,
    edge: EdgeSpec,
    at: number,
    canaryWanted: boolean,
  ): void {
    const r = this.rng;
    const canary = canaryWanted && callee.hosts.length > 2;
    const hostAt = this.rolloutTimes(r.shuffle(callee.hosts), at, canary);
    this.change(callee.name, hostAt, 'dependency.hyper', '0.13.1');
    this.change(callee.name, hostAt, 'dependency.tokio', '1.0.1');
    const keys = this.rolloutMarkers(
      `caller-only:${callee.name}`,
      hostAt,
      {
        kind: 'dependency',
        service: callee.name,
        component: 'hyper',
        from_version: '0.12.35',
        to_version: '0.13.1',
        description: 'bump hyper and tokio',
      },
      false,
    );
    this.edgeEffects.push({ edge, calleeHostAt: hostAt, addMs: 40 });
    const first = Math.min(...hostAt.values());
    const callerAt = new Map(caller.hosts.map((h) => [h, first]));
    const last = Math.max(...hostAt.values());
    this.incidents.push({
      id: `caller-only:${caller.name}`,
      kind: 'caller-only',
      service: caller.name,
      series: [`${caller.name}|request|GET ${edge.route}|${callee.name}`],
      changeAtMs: first,
      lastChangeAtMs: last,
      seriesHosts: caller.hosts,
      regressedHosts: [...callerAt.keys()],
      canary,
      size: `+40 ms on ${edge.calleeSeries.baseMs.toFixed(1)} ms calls to ${callee.name} (${callee.hosts.length} hosts)`,
      cause: {
        markerKeys: keys,
        kind: 'dependency',
        service: callee.name,
        component: 'hyper',
        toVersion: '0.13.1',
        hosts: callee.hosts,
      },
    });
    this.unrelated(callee, at);
  }

  /** 5. A kernel rollout over part of a pool: overlay unmounts of the target's moved hosts take seconds, every other service on those hosts is unaffected. */
  private planKernel(svc: ServiceSpec, at: number, targets: ServiceSpec[], posted: boolean): void {
    const r = this.rng;
    const pool = POOLS[svc.pool]!;
    const moved = r.shuffle(svc.hosts).slice(0, r.int(2, svc.hosts.length - 2));
    // Extra hosts of the rollout: not running another overlay service or another incident's service, not already moved.
    const busy = new Set<string>();
    for (const o of this.services)
      if ((o.overlay || o.cls === 'incident') && o.name !== svc.name)
        for (const h of o.hosts) busy.add(h);
    for (const c of this.changes) if (c.key === 'os.version') busy.add(c.host);
    for (const t of targets) for (const h of t.hosts) busy.add(h);
    const free = r.shuffle(
      this.hosts.filter((h) => h.pool === svc.pool && !busy.has(h.name)).map((h) => h.name),
    );
    const extra = free.slice(0, r.int(Math.min(3, free.length), Math.min(20, free.length)));
    const all = r.shuffle([...moved, ...extra]);
    const hostAt = this.rolloutTimes(all, at, true);
    this.change(null, hostAt, 'os.version', pool.next);
    const marker = {
      kind: 'kernel' as const,
      component: 'kernel',
      from_version: pool.kernel,
      to_version: pool.next,
      description: `kernel ${pool.next} rollout`,
    };
    const keys = posted ? this.rolloutMarkers(`kernel:${svc.name}`, hostAt, marker, true) : [];
    const afterMs = r.uniform(1500, 10_000);
    const um = svc.series.find((x) => x.op === 'unmount')!;
    const movedAt = new Map(moved.map((h) => [h, hostAt.get(h)!]));
    this.effects.push({
      seriesId: um.id,
      hostAt: movedAt,
      apply: (_ms, g) => g.lognormal(afterMs, 0.15),
    });
    const touched = this.services.filter((o) => o.hosts.some((h) => hostAt.has(h))).length;
    this.truth(
      {
        kind: 'kernel-unmount',
        service: svc.name,
        series: [`${um.id}|`],
        regressedHosts: moved,
        canary: true,
        size: `${um.baseMs.toFixed(0)} ms -> ${(afterMs / 1000).toFixed(1)} s on ${moved.length}/${svc.hosts.length} hosts; rollout of ${all.length} hosts touching ${touched} services${posted ? '' : ', not posted (inferred only)'}`,
        cause: {
          markerKeys: keys,
          kind: 'kernel',
          service: null,
          component: 'kernel',
          toVersion: pool.next,
          hosts: all,
        },
      },
      movedAt,
      svc.hosts,
    );
    this.unrelated(svc, at);
  }

  /** No-op releases and dependency bumps on steady services, bursts on bursty ones. */
  private planNoise(): void {
    const r = this.rng;
    const o = this.opts;
    const from = this.t0 + 30 * MIN;
    const to = this.tEnd - 10 * MIN;
    for (const svc of this.services) {
      if (
        svc.cls === 'steady' &&
        !this.released.has(svc.name) &&
        !svc.name.startsWith('node-exporter') &&
        r.chance(0.6)
      ) {
        const t = Math.floor(r.uniform(this.t0 + o.warmupMin * MIN, to) / 1000) * 1000;
        const v = this.bumpVersion(svc.version);
        const hostAt = this.rolloutTimes(
          r.shuffle(svc.hosts),
          t,
          svc.hosts.length > 2 && r.chance(0.3),
        );
        this.change(svc.name, hostAt, 'service.version', v);
        this.rolloutMarkers(
          `noop-release:${svc.name}`,
          hostAt,
          {
            kind: 'code',
            service: svc.name,
            from_version: svc.version,
            to_version: v,
            description: `release ${v} (no latency change)`,
          },
          false,
        );
        svc.version = v;
      }
      if (svc.cls === 'steady' && svc.deps['dependency.openssl'] && r.chance(0.5)) {
        const t = Math.floor(r.uniform(this.t0 + o.warmupMin * MIN, to) / 1000) * 1000;
        this.change(
          svc.name,
          new Map(svc.hosts.map((h) => [h, t])),
          'dependency.openssl',
          '3.0.14',
        );
        this.markers.push({
          key: `noop-dep:${svc.name}`,
          atMs: this.markerAt(t),
          body: {
            kind: 'dependency',
            service: svc.name,
            component: 'openssl',
            from_version: '3.0.13',
            to_version: '3.0.14',
            description: 'openssl patch release',
          },
        });
      }
      if (svc.cls === 'bursty') {
        const n = r.int(2, 4);
        for (let i = 0; i < n; i++) {
          const sp = r.pick(svc.series);
          const t = Math.floor(r.uniform(from, to) / MIN) * MIN;
          this.bursts.push({
            seriesId: sp.id,
            fromMs: t,
            toMs: t + r.int(1, 4) * MIN,
            factor: r.uniform(3, 30),
            host: r.chance(0.5) ? r.pick(svc.hosts) : null,
          });
        }
      }
    }
  }

  // ---------------------------------------------------------------- resources and spans

  private buildTimelines(): void {
    const sorted = [...this.changes].sort((a, b) => a.atMs - b.atMs);
    const hostKernel = new Map(this.hosts.map((h) => [h.name, h.kernel]));
    for (const svc of this.services) {
      for (const host of svc.hosts) {
        const attrs: Record<string, string> = {
          'service.name': svc.name,
          'host.name': host,
          'os.version': hostKernel.get(host)!,
          'service.version': svc.initialVersion,
          ...svc.deps,
          ...svc.cohort,
        };
        const line: { atMs: number; attrs: Record<string, string> }[] = [
          { atMs: -Infinity, attrs },
        ];
        const mine = sorted.filter(
          (c) => c.host === host && (c.service === null || c.service === svc.name),
        );
        this.timelines.set(`${svc.name}\u0000${host}`, line);
        if (!mine.length) continue;
        for (const c of mine) {
          const prev = line[line.length - 1]!;
          const next = { ...prev.attrs, [c.key]: c.value };
          if (prev.atMs === c.atMs) prev.attrs = next;
          else line.push({ atMs: c.atMs, attrs: next });
        }
      }
    }
  }

  private attrsAt(service: string, host: string, t: number): Record<string, string> {
    const line = this.timelines.get(`${service}\u0000${host}`)!;
    let cur = line[0]!.attrs;
    for (const s of line) {
      if (s.atMs <= t) cur = s.attrs;
      else break;
    }
    return cur;
  }

  private nextId(len: 16 | 32): string {
    const n = (this.idCounter++).toString(16).padStart(len === 32 ? 24 : 8, '0');
    return len === 32
      ? `${this.idPrefix}${n}`
      : `${this.idPrefix}${n}`.slice(-16).padStart(16, '0');
  }

  private latency(sp: SeriesSpec, svc: ServiceSpec, host: string, t: number, g: Rng): number {
    const diurnal =
      1 + svc.diurnalAmp * Math.sin((2 * Math.PI * (t - this.t0)) / DAY + svc.diurnalPhase);
    let ms = sp.baseMs * diurnal * Math.exp(sp.sigma * g.normal());
    // Occasional outliers: GC pauses, a cold cache.
    if (g.chance(0.004)) ms *= g.uniform(3, 12);
    for (const e of this.effects) {
      if (e.seriesId !== sp.id) continue;
      const at = e.hostAt.get(host);
      if (at !== undefined && t >= at) ms = e.apply(ms, g);
    }
    for (const b of this.bursts)
      if (
        b.seriesId === sp.id &&
        t >= b.fromMs &&
        t < b.toMs &&
        (b.host === null || b.host === host)
      )
        ms *= b.factor;
    return ms;
  }

  private rateAt(svc: ServiceSpec, t: number): number {
    return 1 + 0.3 * Math.sin((2 * Math.PI * (t - this.t0)) / DAY + svc.diurnalPhase + 0.5);
  }

  /** Every span of the minute starting at `t`, with its resource, deterministic for (seed, minute). */
  minute(t: number, emit: SpanSink): void {
    // Seeded by the minute's place in the replay, not the wall clock: a seed is the same data whenever it runs.
    const g = new Rng(this.opts.seed * 1_000_003 + Math.floor((t - this.t0) / MIN));
    for (const svc of this.services) {
      const rf = this.rateAt(svc, t);
      for (const sp of svc.series) {
        for (const host of svc.hosts) {
          const n = g.poisson(sp.rate * rf);
          for (let i = 0; i < n; i++) {
            const start = t + g.next() * MIN;
            const ms = this.latency(sp, svc, host, start, g);
            emit(this.attrsAt(svc.name, host, start), {
              traceId: this.nextId(32),
              spanId: this.nextId(16),
              parentId: null,
              name: sp.op === 'request' ? sp.name : sp.op,
              kind: sp.op === 'request' ? 2 : 1,
              startMs: start,
              durMs: ms,
              attrs: this.spanAttrs(sp, ms),
            });
          }
        }
      }
    }
    for (const e of this.edges) {
      const caller = this.byName.get(e.caller)!;
      const callee = this.byName.get(e.callee)!;
      const rf = this.rateAt(caller, t);
      const effect = this.edgeEffects.find((x) => x.edge === e);
      for (const host of caller.hosts) {
        const n = g.poisson(e.rate * rf);
        for (let i = 0; i < n; i++) {
          const start = t + g.next() * MIN;
          const calleeHost = g.pick(callee.hosts);
          const server = this.latency(e.calleeSeries, callee, calleeHost, start, g);
          let client = server + e.netMs * g.lognormal(1, 0.3);
          const at = effect?.calleeHostAt.get(calleeHost);
          if (effect && at !== undefined && start >= at)
            client += effect.addMs + Math.abs(g.normal()) * 0.8;
          const traceId = this.nextId(32);
          const clientId = this.nextId(16);
          emit(this.attrsAt(caller.name, host, start), {
            traceId,
            spanId: clientId,
            parentId: null,
            name: `GET ${e.route}`,
            kind: 3,
            startMs: start,
            durMs: client,
            attrs: {
              'http.request.method': 'GET',
              'http.route': e.route,
              'peer.service': e.callee,
            },
          });
          emit(this.attrsAt(callee.name, calleeHost, start), {
            traceId,
            spanId: this.nextId(16),
            parentId: clientId,
            name: `GET ${e.route}`,
            kind: 2,
            startMs: start + (client - server) / 2,
            durMs: server,
            attrs: { 'http.request.method': 'GET', 'http.route': e.route },
          });
        }
      }
    }
  }

  private spanAttrs(sp: SeriesSpec, ms: number): Record<string, string | number> {
    switch (sp.op) {
      case 'spawn':
        return {
          'process.executable.name': sp.name,
          'onset.parent.fd_count': Math.round(ms > sp.baseMs * 4 ? ms / 0.011 : 200 + ms),
        };
      case 'fsync':
        return {
          'file.directory': sp.name,
          'onset.fsync.count': Math.max(1, Math.round(ms / 1.6)),
        };
      case 'unmount':
        return { 'fs.mountpoint': sp.name, ...sp.attrs };
      default:
        return sp.attrs;
    }
  }
}
