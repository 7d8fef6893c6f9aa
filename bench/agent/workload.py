"""Benchmark workload: fsyncs and spawns at fixed rates, timing its own operations.

Usage: workload.py SECONDS FSYNC_PER_S SPAWN_PER_S DIR
Runs paced at the given rates for SECONDS and prints one JSON line with the
time spent inside the operations (so pacing sleeps do not hide any
slowdown): counts, totals and medians in ns, e.g.
{"fsyncs": n, "fsync_ns": total, "fsync_p50_ns": m, "spawns": n, ...}, and
"cpu_ns": the CPU time (user + system) of the workload and of its spawned
children over the run, which tracing adds to (probes run inside the traced
system calls) but which other load on a shared machine moves much less than
wall times. Sets its process name to "onset-bench" so the agent can filter on it.
"""
import ctypes
import json
import os
import resource
import sys
import time

ctypes.CDLL(None).prctl(15, b"onset-bench", 0, 0, 0)
seconds, fsync_rate, spawn_rate, base = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

os.makedirs(base, exist_ok=True)
fd = os.open(os.path.join(base, "journal"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
block = b"x" * 512
true = "/bin/true"

# One tick per spawn; the fsyncs are spread over the ticks.
ticks = int(seconds * spawn_rate)
fsyncs_per_tick = fsync_rate / spawn_rate
period = 1.0 / spawn_rate
fsync_ns = spawn_ns = fsyncs = spawns = 0
fsync_each, spawn_each = [], []
owed = 0.0
def cpu_ns():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return int((s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime) * 1e9)
cpu0 = cpu_ns()
start = time.monotonic()
for i in range(ticks):
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(true, [true], {})
    os.waitpid(pid, 0)
    d = time.perf_counter_ns() - t0
    spawn_ns += d
    spawn_each.append(d)
    spawns += 1
    owed += fsyncs_per_tick
    while owed >= 1:
        os.write(fd, block)
        t0 = time.perf_counter_ns()
        os.fsync(fd)
        d = time.perf_counter_ns() - t0
        fsync_ns += d
        fsync_each.append(d)
        fsyncs += 1
        owed -= 1
    delay = start + (i + 1) * period - time.monotonic()
    if delay > 0:
        time.sleep(delay)

cpu = cpu_ns() - cpu0
os.close(fd)
def median(xs):
    return sorted(xs)[len(xs) // 2] if xs else 0

print(json.dumps({
    "fsyncs": fsyncs, "fsync_ns": fsync_ns, "fsync_p50_ns": median(fsync_each),
    "spawns": spawns, "spawn_ns": spawn_ns, "spawn_p50_ns": median(spawn_each),
    "cpu_ns": cpu, "wall_s": time.monotonic() - start,
}), flush=True)
