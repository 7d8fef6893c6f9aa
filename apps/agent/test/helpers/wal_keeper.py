"""Test workload: a WAL keeper removing batches of segment files (incident 3).

Usage: wal_keeper.py COMM DIR PASSES FILES [--wait] [--hold-switch]
Sets its process name to COMM. Each pass writes FILES segment files into DIR,
waits PAUSE, then removes them. With --wait it prints "ready" and waits for a
line on stdin first. It runs PASSES passes with one directory fsync at the end
of each removal batch, prints "switch", then PASSES passes with a directory
fsync after every unlink (the change behind the incident), prints "done" and
exits. With --hold-switch it waits for a line on stdin after "switch" (so a
test can put the change in a later minute). Each pass prints "pass MODE FSYNCS MS" (its own timing, for the test).
"""
import ctypes
import os
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NAME = 15
# Longer than the agent's 100 ms operation gap, so passes are separate operations.
PAUSE = 0.3

comm, wal, passes, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
libc.prctl(PR_SET_NAME, comm.encode(), 0, 0, 0)
os.makedirs(wal, exist_ok=True)
if "--wait" in sys.argv:
    print("ready", flush=True)
    sys.stdin.readline()

block = os.urandom(8192)
dfd = os.open(wal, os.O_RDONLY)


def one_pass(each):
    names = [os.path.join(wal, f"{n:08X}") for n in range(files)]
    for name in names:
        with open(name, "wb") as f:
            f.write(block)
    time.sleep(PAUSE)
    t0 = time.perf_counter()
    fsyncs = 0
    for name in names:
        os.unlink(name)
        if each:
            os.fsync(dfd)
            fsyncs += 1
    if not each:
        os.fsync(dfd)
        fsyncs += 1
    ms = (time.perf_counter() - t0) * 1000
    print(f"pass {'each' if each else 'batch'} {fsyncs} {ms:.2f}", flush=True)
    time.sleep(PAUSE)


for _ in range(passes):
    one_pass(False)
print("switch", flush=True)
if "--hold-switch" in sys.argv:
    sys.stdin.readline()
for _ in range(passes):
    one_pass(True)
os.close(dfd)
print("done", flush=True)
