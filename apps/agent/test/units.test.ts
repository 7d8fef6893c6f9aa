/**
 * The parsing and bookkeeping the sources rely on, with inputs captured from
 * the real tools on this machine (strace 6.1, bpftrace 0.17, Linux 6.x).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../src/events.ts';
import { Btf, readKernelLayout } from '../src/host/btf.ts';
import { MountTable, pathThroughMount } from '../src/host/mounts.ts';
import { parseMountinfo } from '../src/host/proc.ts';
import { parseServerTiming } from '../src/probes/server-timing.ts';
import { BpftraceDecoder } from '../src/sources/bpftrace/decode.ts';
import { buildProgram, filterBlock } from '../src/sources/bpftrace/program.ts';
import { describeUnmountEnd, unmountEndProbes } from '../src/host/tracepoints.ts';
import { StraceCorrelator } from '../src/sources/strace/correlate.ts';
import { StraceParser, cloneFlags, fdPath, firstQuoted } from '../src/sources/strace/parse.ts';
import { SpanBuffer } from '../src/telemetry/span-buffer.ts';
import type { SpanRecord } from '../src/telemetry/span-record.ts';
import { eventToSpan } from '../src/telemetry/spans.ts';
import { normalizePath } from '../src/telemetry/normalize.ts';
import { TraceScope } from '../src/telemetry/scope.ts';
import { SeriesCap, type CapReport } from '../src/telemetry/series-cap.ts';

describe('strace output', () => {
  // Captured from `strace -f -q -ttt -T -y` on a Python workload (vfork + exec interleaved).
  const lines = [
    '1795362471.739609 fsync(3</tmp/wl2/dir with space/x>) = 0 <0.011605>',
    '1795362471.756493 vfork( <unfinished ...>',
    '[pid 21509] 1795362471.760648 execve("/bin/true", ["/bin/true"], 0x7ffe09538dc0 /* 35 vars */ <unfinished ...>',
    '[pid 21476] 1795362471.760889 <... vfork resumed>) = 21509 <0.004357>',
    '[pid 21509] 1795362471.763242 <... execve resumed>) = 0 <0.002515>',
    '[pid 21509] 1795362471.766000 +++ exited with 0 +++',
    '1795362471.840486 umount2("/tmp/wl2/mnt", 0) = -1 EBUSY (Device or resource busy) <0.000073>',
    '/usr/bin/strace: Process 21476 detached',
  ];

  it('joins unfinished/resumed calls and reads pids, times, results and errors', () => {
    const p = new StraceParser(21476);
    const out = lines.map((l) => p.line(l));
    const calls = out.flatMap((l) => (l.type === 'call' ? [l.call] : []));
    expect(calls.map((c) => [c.pid, c.name, c.ret, c.errno])).toEqual([
      [21476, 'fsync', '0', undefined],
      [21476, 'vfork', '21509', undefined],
      [21509, 'execve', '0', undefined],
      [21476, 'umount2', '-1', 'EBUSY'],
    ]);
    // A resumed call keeps the start time of its first half.
    expect(calls[1]).toMatchObject({ startSec: 1795362471.756493, durationSec: 0.004357 });
    expect(out[5]).toEqual({ type: 'exit', pid: 21509 });
    expect(out[7]).toEqual({ type: 'message', text: 'Process 21476 detached' });
    expect(fdPath(calls[0]!.args)).toBe('/tmp/wl2/dir with space/x');
    expect(firstQuoted('"/a\\"b\\x41\\n", 0')).toBe('/a"bA\n');
    expect([...cloneFlags('{flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD}, 88')]).toEqual([
      'CLONE_VM',
      'CLONE_VFORK',
    ]);
  });

  it('reads the "PID  time" prefix strace uses when writing to a file', () => {
    const l = new StraceParser(1).line(
      '7245  1795363394.363594 fsync(3</var/tmp/x>) = 0 <0.003562>',
    );
    expect(l).toMatchObject({
      type: 'call',
      call: { pid: 7245, name: 'fsync', durationSec: 0.003562 },
    });
  });

  it('makes a spawn from the parent’s vfork start to the end of the child’s exec, whichever line comes first', () => {
    const events: AgentEvent[] = [];
    const c = new StraceCorrelator({
      sink: (e) => events.push(e),
      mounts: new MountTable(),
      proc: { fdCount: () => 12, rssBytes: () => 8 << 20, name: () => 'parent' },
      dirtyAt: () => ({ dirtyBytes: 4096, writebackBytes: 0 }),
    });
    const p = new StraceParser(21476);
    for (const l of lines) {
      const r = p.line(l);
      if (r.type === 'call') c.handle(r.call);
    }
    const spawn = events.find((e) => e.kind === 'spawn')!;
    expect(spawn).toMatchObject({
      executable: '/bin/true',
      method: 'vfork',
      sharedMemory: true,
      pid: 21509,
      parentPid: 21476,
      parentFdCount: 12,
      parentRssBytes: 8 << 20,
    });
    // vfork started at .756493; the child's execve started at .760648 and took 0.002515 s.
    expect(spawn.durationNs).toBe(6_670_000);
    const um = events.find((e) => e.kind === 'unmount')!;
    expect(um).toMatchObject({ mountPoint: '/tmp/wl2/mnt', error: 'EBUSY', dirtyBytes: 4096 });
  });
});

describe('bpftrace output', () => {
  it('assembles directory paths from dentry names and the mount they are on', () => {
    const events: AgentEvent[] = [];
    const mounts = new MountTable();
    // Resolve mount id 27 through our own mountinfo: the root filesystem.
    const rootMount = parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8')).find(
      (m) => m.mountPoint === '/',
    )!;
    const d = new BpftraceDecoder({
      sink: (e) => events.push(e),
      mounts,
      toEpochNs: (n) => n + 1_000n,
      pageSize: 4096,
      dirtyNow: () => undefined,
    });
    for (const [i, name] of ['dir', 'wl', 'tmp', '/'].entries())
      d.handle(['dir', 150088770393600, i, name]);
    d.handle([
      'fsync',
      1,
      18509,
      18509,
      'onset-wl',
      1417829262549,
      801096,
      0,
      150088770393600,
      rootMount.id,
      0,
      'x',
    ]);
    d.handle([
      'fsync',
      2,
      18509,
      18509,
      'onset-wl',
      1417830136962,
      434531,
      -5,
      150088770393600,
      rootMount.id,
      0,
      'x',
    ]);
    d.handle([
      'spawn',
      18510,
      18509,
      'onset-wl',
      2,
      0x4111,
      1417830805550,
      1495161,
      20003,
      32768,
      3605,
      '/bin/true',
      'true',
    ]);
    expect(events[0]).toMatchObject({
      kind: 'fsync',
      call: 'fsync',
      directory: '/tmp/wl/dir',
      path: '/tmp/wl/dir/x',
      startNs: 1417829263549n,
      durationNs: 801096,
    });
    expect(events[1]).toMatchObject({ call: 'fdatasync', error: 'EIO' });
    expect(events[2]).toMatchObject({
      kind: 'spawn',
      method: 'vfork',
      sharedMemory: true,
      parentFdCount: 20003,
      parentRssBytes: 3605 * 4096,
      executable: '/bin/true',
    });
  });

  it('pairs an unmount’s entry and exit even when exit is read first', () => {
    const events: AgentEvent[] = [];
    const noRegs: number[] = [];
    const d = new BpftraceDecoder({
      sink: (e) => events.push(e),
      mounts: new MountTable(),
      toEpochNs: (n) => n,
      pageSize: 4096,
      dirtyNow: () => ({ dirtyBytes: 1 << 20, writebackBytes: 0 }),
      onUnmountNoRegs: (tid) => noRegs.push(tid),
    });
    d.handle(['mount_type', 7, 'overlay']);
    d.handle(['mount', 7, 7, '/var/tmp/gone']);
    // Ended at the return to user space (1): 250 ns in all, 40 of them in the syscall.
    d.handle(['umount', 7, 7, 5000, 250, 0, 40, 1, 0]);
    d.handle(['umount_start', 7, 7, 'wl', '/var/tmp/gone', 0, 5000]);
    // Syscall-only timing (0), on a kernel without the return probes.
    d.handle(['umount_start', 7, 8, 'wl', '/var/tmp/gone', 0, 9000]);
    d.handle(['umount', 7, 8, 9000, 30, -16, 30, 0, 0]);
    // A thread without rseq, ended by the tick check (4): seen still inside 3 ms before the end.
    d.handle(['umount_start', 9, 9, 'go', '/var/tmp/gone', 0, 20000]);
    d.handle(['umount', 9, 9, 20000, 9_000_000, 0, 100_000, 4, 3_000_000]);
    d.handle(['umount_noregs', 10]);
    expect(noRegs).toEqual([10]);
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'unmount',
        mountPoint: '/var/tmp/gone',
        fsType: 'overlay',
        durationNs: 250,
        syscallNs: 40,
        measuredUntil: 'return-to-user',
        dirtyBytes: 1 << 20,
      }),
      expect.objectContaining({
        durationNs: 30,
        syscallNs: 30,
        measuredUntil: 'syscall-exit',
        error: 'EBUSY',
      }),
      expect.objectContaining({
        durationNs: 9_000_000,
        syscallNs: 100_000,
        measuredUntil: 'next-tick',
        endUncertaintyNs: 3_000_000,
      }),
    ]);
    expect(events[0]).not.toHaveProperty('endUncertaintyNs', expect.anything());
    expect(eventToSpan(events[2]!).attributes).toMatchObject({
      'onset.unmount.measured_until': 'next-tick',
      'onset.unmount.end_uncertainty_ns': 3_000_000,
    });
    expect(eventToSpan(events[0]!).attributes).toMatchObject({
      'onset.unmount.measured_until': 'return-to-user',
      'onset.unmount.syscall_ns': 40,
    });
  });

  it('holds an unmount read before its mount call (another CPU’s buffer) until the mount names its type', () => {
    const events: AgentEvent[] = [];
    const d = new BpftraceDecoder({
      sink: (e) => events.push(e),
      mounts: new MountTable(),
      toEpochNs: (n) => n,
      pageSize: 4096,
      dirtyNow: () => undefined,
    });
    // The unmount's lines came first and the mount is gone from mountinfo: no type yet.
    d.handle(['umount_start', 7, 7, 'wl', '/var/tmp/late', 0, 5000]);
    d.handle(['umount', 7, 7, 5000, 250, 0, 40, 1, 0]);
    expect(events).toEqual([]);
    d.handle(['mount_type', 7, 'tmpfs']);
    d.handle(['mount', 7, 7, '/var/tmp/late']);
    expect(events).toEqual([
      expect.objectContaining({ kind: 'unmount', mountPoint: '/var/tmp/late', fsType: 'tmpfs' }),
    ]);
    // A mount point whose mount call never arrives is sent untyped when the tracer stops.
    d.handle(['umount_start', 7, 8, 'wl', '/var/tmp/never', 0, 9000]);
    d.handle(['umount', 7, 8, 9000, 30, 0, 30, 0, 0]);
    expect(events).toHaveLength(1);
    d.flush();
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ mountPoint: '/var/tmp/never', fsType: undefined });
  });

  it('ends unmounts past the syscall with the tracepoints this kernel has, else times the syscall and says why', () => {
    const layout = { rssStat: 'percpu', fileFPath: 16, mountMnt: 32 } as const;
    const filter = { pids: [], comms: [], cgroupIds: [], skipPids: [] };
    const all = buildProgram(filter, layout, { rseq: true, tick: true, nextSyscall: true });
    expect(all.parts).toEqual(
      expect.arrayContaining([
        'unmount-return.bt',
        'unmount-rseq.bt',
        'unmount-tick.bt',
        'unmount-next-syscall.bt',
      ]),
    );
    expect(all.text).toContain('@um_defer = 1;');
    expect(all.text).toContain('tracepoint:rseq:rseq_update');
    // The default on x86_64: no probe on every system call.
    const cheap = buildProgram(filter, layout, { rseq: true, tick: true, nextSyscall: false });
    expect(cheap.text).toContain('tracepoint:irq_vectors:local_timer_entry');
    expect(cheap.text).not.toContain('tracepoint:raw_syscalls:sys_enter');
    const noRseq = buildProgram(filter, layout, { rseq: false, tick: false, nextSyscall: true });
    expect(noRseq.text).not.toContain('tracepoint:rseq:rseq_update');
    expect(noRseq.text).not.toContain('local_timer_entry');
    expect(noRseq.text).toContain('tracepoint:raw_syscalls:sys_enter');
    const none = { rseq: false, tick: false, nextSyscall: false };
    const neither = buildProgram(filter, layout, none);
    expect(neither.text).toContain('@um_defer = 0;');
    expect(neither.parts).not.toContain('unmount-return.bt');
    expect(neither.text).not.toMatch(/tracepoint:(rseq|raw_syscalls|irq_vectors)/);
    expect(describeUnmountEnd(none)).toMatch(
      /time the umount system call only: this kernel has none/,
    );
    expect(describeUnmountEnd({ rseq: true, tick: true, nextSyscall: false })).not.toMatch(
      /every system call/,
    );
    expect(describeUnmountEnd({ rseq: true, tick: true, nextSyscall: true })).toMatch(
      /next system call .*runs on every system call of the host/,
    );
    // This kernel (tracefs mounted by the tests that run bpftrace, or already): the next-system-
    // call probe only when asked for, or where there is no tick check.
    if (existsSync('/sys/kernel/tracing/events/syscalls')) {
      const rseq = existsSync('/sys/kernel/tracing/events/rseq/rseq_update');
      const tick =
        process.arch === 'x64' &&
        existsSync('/sys/kernel/tracing/events/irq_vectors/local_timer_entry');
      expect(unmountEndProbes()).toEqual({ rseq, tick, nextSyscall: !tick });
      expect(unmountEndProbes({ nextSyscall: true })).toEqual({ rseq, tick, nextSyscall: true });
    }
    const empty = mkdtempSync(path.join(os.tmpdir(), 'onset-tp-'));
    expect(unmountEndProbes({ nextSyscall: true }, [empty])).toEqual(none);
    // Not x86_64: the register frame check does not apply.
    expect(unmountEndProbes({}, undefined, 'arm64').tick).toBe(false);
    rmSync(empty, { recursive: true });
  });

  it('writes the process filter into the program’s BEGIN block', () => {
    const text = filterBlock({
      pids: [42],
      comms: ['postgres', 'a-very-long-process-name'],
      cgroupIds: [1234n],
      skipPids: [7],
    });
    expect(text).toContain('@all = 0;');
    expect(text).toContain('@want_pid[42] = 1;');
    expect(text).toContain('@want_comm["postgres"] = 1;');
    expect(text).toContain('@want_comm["a-very-long-pro"] = 1;'); // comm is 15 bytes
    expect(text).toContain('@want_cgroup[1234] = 1;');
    expect(text).toContain('@skip_pid[7] = 1;');
    expect(filterBlock({ pids: [], comms: [], cgroupIds: [], skipPids: [] })).toContain(
      '@all = 1;',
    );
  });

  it('reads struct offsets from this kernel’s BTF', () => {
    const { layout } = readKernelLayout();
    expect(layout).toBeDefined();
    // f_path sits after a handful of pointers in struct file; mnt after the hash node and two pointers in struct mount.
    expect(layout!.fileFPath).toBeGreaterThanOrEqual(16);
    expect(layout!.fileFPath % 8).toBe(0);
    expect(layout!.mountMnt).toBe(32);
    expect(Btf.fromKernel().memberOffset('path', 'dentry')).toBe(8);
  });
});

describe('mount paths', () => {
  it('maps a path from a filesystem root through bind mounts', () => {
    const [root, bind] = parseMountinfo(
      [
        '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
        '90 27 254:0 /srv/data /mnt/data\\040x rw - ext4 /dev/vda rw',
      ].join('\n'),
    );
    expect(bind).toMatchObject({
      id: 90,
      root: '/srv/data',
      mountPoint: '/mnt/data x',
      fsType: 'ext4',
    });
    expect(pathThroughMount(root!, '/var/lib/pg')).toBe('/var/lib/pg');
    expect(pathThroughMount(bind!, '/srv/data/wal')).toBe('/mnt/data x/wal');
    expect(pathThroughMount(bind!, '/srv/data')).toBe('/mnt/data x');
  });
});

describe('Server-Timing', () => {
  it('parses metrics, durations and quoted descriptions', () => {
    expect(
      parseServerTiming(
        'db;dur=53, app;dur=47.2, cache;desc="Cache Read, hot";dur=23.2, miss, bad name;dur=1',
      ),
    ).toEqual([
      { name: 'db', durMs: 53 },
      { name: 'app', durMs: 47.2 },
      { name: 'cache', durMs: 23.2, desc: 'Cache Read, hot' },
      { name: 'miss' },
    ]);
    expect(parseServerTiming(null)).toEqual([]);
  });
});

describe('span queue', () => {
  const span = (i: number): SpanRecord => ({
    ...eventToSpan({
      kind: 'spawn',
      source: 'probe',
      executable: '/bin/true',
      startNs: 0n,
      durationNs: 1,
    }),
    name: `s${i}`,
  });

  it('drops the oldest when full, and spans put back after a failed export are older than the rest', () => {
    const q = new SpanBuffer(5, 1 << 30);
    for (let i = 0; i < 8; i++) q.push(span(i));
    expect(q.dropped).toBe(3);
    const batch = q.take(2); // s3, s4 in flight
    q.push(span(8));
    q.push(span(9));
    q.returnToFront(batch); // no room: the returned (older) ones are dropped
    expect(q.dropped).toBe(5);
    expect(q.take(10).map((s) => s.name)).toEqual(['s5', 's6', 's7', 's8', 's9']);
  });

  it('caps memory too', () => {
    const q = new SpanBuffer(1_000_000, 5_000);
    for (let i = 0; i < 100; i++) q.push(span(i));
    expect(q.bytes).toBeLessThanOrEqual(5_000);
    expect(q.length).toBeGreaterThan(0);
    expect(q.length + q.dropped).toBe(100);
  });
});

describe('spans', () => {
  it('name and label spans the way Onset classifies them', () => {
    const fsync = eventToSpan({
      kind: 'fsync',
      source: 'bpftrace',
      call: 'fdatasync',
      startNs: 1n,
      durationNs: 5,
      directory: '/pg/wal',
      path: '/pg/wal/0001',
      pid: 9,
      comm: 'postgres',
    });
    expect(fsync.name).toBe('fdatasync');
    expect(fsync.attributes).toMatchObject({
      'onset.op': 'fsync',
      'file.directory': '/pg/wal',
      'file.path': '/pg/wal/0001',
      'process.executable.name': 'postgres',
    });
    const um = eventToSpan({
      kind: 'unmount',
      source: 'strace',
      startNs: 1n,
      durationNs: 5,
      mountPoint: '/m',
      fsType: 'overlay',
      dirtyBytes: 10,
    });
    expect(um).toMatchObject({
      name: 'umount',
      attributes: {
        'onset.op': 'unmount',
        'fs.mountpoint': '/m',
        'fs.type': 'overlay',
        'onset.unmount.dirty_bytes': 10,
      },
    });
    const req = eventToSpan({
      kind: 'request',
      source: 'probe',
      startNs: 1n,
      durationNs: 5,
      method: 'GET',
      url: 'http://api:8080/v1/x?y=1',
      statusCode: 200,
      serverTiming: [{ name: 'db', durMs: 2 }],
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
    });
    expect(req).toMatchObject({
      name: 'GET /v1/x',
      kind: 2,
      traceId: 'a'.repeat(32),
      attributes: {
        'http.request.method': 'GET',
        'server.address': 'api',
        'server.port': 8080,
        'onset.server_timing.db.dur_ms': 2,
      },
    });
  });
});

describe('series names of traced paths', () => {
  it('fold generated path components and keep names people choose', () => {
    expect(normalizePath('/tmp/tmp.Xk3Fa9')).toBe('/tmp/tmp.*');
    expect(normalizePath('/var/tmp/onset-agent-bt-q8ZLmN/wl/data')).toBe(
      '/var/tmp/onset-agent-bt-*/wl/data',
    );
    expect(normalizePath('/var/tmp/onset-agent-bt-AbCdEf/wl/data')).toBe(
      '/var/tmp/onset-agent-bt-*/wl/data',
    );
    expect(normalizePath('/proc/4242/fd')).toBe('/proc/*/fd');
    expect(normalizePath('/tmp/tmpk3j4h5_2')).toBe('/tmp/tmp*');
    expect(
      normalizePath(
        '/var/lib/docker/overlay2/3f1c9e0a7b2d4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6/merged',
      ),
    ).toBe('/var/lib/docker/overlay2/*/merged');
    // Numbers fold too: per-version and per-database directories become one series.
    expect(normalizePath('/var/lib/postgresql/16/main/pg_wal')).toBe(
      '/var/lib/postgresql/*/main/pg_wal',
    );
    for (const kept of [
      '/usr/lib/python3.11/site-packages',
      '/home/dev/my-Project/node_modules/.cache',
      '/opt/node-v20.19.0/bin',
      '/',
    ])
      expect(normalizePath(kept)).toBe(kept);
  });

  it('traced fsyncs and unmounts are named by the folded path and keep the real one', () => {
    const fsync = eventToSpan({
      kind: 'fsync',
      source: 'bpftrace',
      call: 'fsync',
      startNs: 1n,
      durationNs: 5,
      directory: '/tmp/tmp.Xk3Fa9',
      path: '/tmp/tmp.Xk3Fa9/f',
    });
    expect(fsync.attributes).toMatchObject({
      'file.directory': '/tmp/tmp.*',
      'onset.fsync.directory': '/tmp/tmp.Xk3Fa9',
      'file.path': '/tmp/tmp.Xk3Fa9/f',
    });
    const um = eventToSpan({
      kind: 'unmount',
      source: 'strace',
      startNs: 1n,
      durationNs: 5,
      mountPoint: '/run/user/1000',
    });
    expect(um.attributes).toMatchObject({
      'fs.mountpoint': '/run/user/*',
      'onset.unmount.path': '/run/user/1000',
    });
    // The probes' own directories are configured, not generated: never folded.
    const probe = eventToSpan({
      kind: 'fsync',
      source: 'probe',
      call: 'fsync',
      startNs: 1n,
      durationNs: 5,
      directory: '/var/tmp/onset-agent-probes-q8ZLmN/wal',
    });
    expect(probe.attributes['file.directory']).toBe('/var/tmp/onset-agent-probes-q8ZLmN/wal');
  });
});

describe('tracing scope and the new-series cap', () => {
  const config = {
    defaults: true,
    exclude: ['/srv/scratch/**'],
    include: ['/tmp/playwright-keep/**'],
    excludeProcesses: ['chromium'],
    maxNewSeriesPerMinute: 3,
  };
  const fsync = (directory: string, comm = 'postgres'): AgentEvent => ({
    kind: 'fsync',
    source: 'bpftrace',
    call: 'fsync',
    startNs: 1n,
    durationNs: 1000,
    directory,
    pid: 42,
    comm,
  });

  it('leaves default, configured and process excludes out; include wins; probes always pass', () => {
    const s = new TraceScope(config, true);
    expect(s.excluded(fsync('/tmp/playwright_chromiumdev_profile-Xk3Fa9/Default'))).toBe(
      '/tmp/playwright_chromiumdev_profile-Xk3Fa9/Default',
    );
    expect(s.excluded(fsync('/home/u/.npm/_cacache/index-v5/ab'))).toBeDefined();
    expect(s.excluded(fsync('/srv/scratch/run1'))).toBeDefined();
    expect(s.excluded(fsync('/tmp/playwright-keep/db'))).toBeUndefined();
    expect(s.excluded(fsync('/var/lib/postgresql/16/main/pg_wal'))).toBeUndefined();
    expect(s.excluded(fsync('/var/lib/x', 'chromium'))).toBe('process chromium');
    expect(
      s.excluded({ ...fsync('/tmp/playwright_x/Default'), source: 'probe' } as AgentEvent),
    ).toBeUndefined();
    // With a filter the built-in list is off (the user chose the processes); theirs still applies.
    const filtered = new TraceScope(config, false);
    expect(filtered.excluded(fsync('/tmp/playwright_x/Default'))).toBeUndefined();
    expect(filtered.excluded(fsync('/srv/scratch/run1'))).toBeDefined();
  });

  it('admits a few new series a minute, always the known ones, and reports what it dropped', () => {
    let now = 0;
    const reports: CapReport[] = [];
    const cap = new SeriesCap(
      3,
      (r) => reports.push(r),
      () => now,
    );
    const span = (dir: string) => eventToSpan(fsync(dir));
    for (let i = 0; i < 5; i++) expect(cap.admit(span(`/d${i}`))).toBe(i < 3);
    expect(cap.admit(span('/d0'))).toBe(true); // known series always pass
    expect(cap.admit(span('/d4'))).toBe(false);
    now = 60_000;
    expect(cap.admit(span('/d4'))).toBe(true); // a new minute
    expect(reports).toEqual([
      {
        droppedSpans: 3,
        droppedSeries: 2,
        examples: ['fsync internal /d3', 'fsync internal /d4'],
        totalDroppedSpans: 3,
      },
    ]);
    // Series are named as the server names them: folded paths share one.
    expect(SeriesCap.key(span('/tmp/tmp.Xk3Fa9'))).toBe(SeriesCap.key(span('/tmp/tmp.Qw7Zr2')));
  });
});
