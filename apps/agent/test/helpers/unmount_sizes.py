"""Unmount workload: mount a filesystem, write N MB into it, unmount it, and
time the unmount itself, as a service would log it.

Usage: unmount_sizes.py COMM BASE TYPE MB [MB ...]
TYPE is tmpfs or overlay (upper layer under BASE, which should be on a real
disk). Runs at real-time priority when it may. For each MB it mounts BASE/TYPE-MB-i/mnt, writes MB megabytes, and
prints one JSON line {"mnt", "mb", "ns"} where ns is the wall time of the
umount2() call measured around it (CLOCK_MONOTONIC, no system call between
the two clock reads and the unmount; getppid() right after the second). Prints
"done" at the end.
"""
import ctypes
import json
import os
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
PR_SET_NAME = 15
MNT_DETACH = 2

comm, base, kind = sys.argv[1], sys.argv[2], sys.argv[3]
sizes = [int(a) for a in sys.argv[4:]]
libc.prctl(PR_SET_NAME, comm.encode(), 0, 0, 0)
# Real-time priority (root): on a busy machine a preemption between the clock reads and the
# call would otherwise count as unmount time here but not in the kernel's view.
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
except OSError:
    pass
chunk = b"\x07" * (1 << 20)

for i, mb in enumerate(sizes):
    d = os.path.join(base, f"{kind}-{mb}-{i}")
    mnt = os.path.join(d, "mnt")
    os.makedirs(mnt, exist_ok=True)
    if kind == "tmpfs":
        opts = f"size={mb * 2 + 16}m"
    else:
        for sub in ("lower", "upper", "work"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        opts = f"lowerdir={d}/lower,upperdir={d}/upper,workdir={d}/work"
    if libc.mount(b"onset-unmount-test", mnt.encode(), kind.encode(), 0, opts.encode()) != 0:
        sys.exit(f"mount {kind} failed: errno {ctypes.get_errno()}")
    with open(os.path.join(mnt, "data"), "wb") as f:
        for _ in range(mb):
            f.write(chunk)
    target = mnt.encode()
    t0 = time.monotonic_ns()
    r = libc.umount2(target, 0)
    t1 = time.monotonic_ns()
    # A system call right after the clock read, as a service logging its timing makes one: the
    # agent ends an unmount at the thread's next system call when the kernel skips the
    # return-to-user tracepoint (see docs/agent.md "Unmount time").
    os.getppid()
    if r != 0:
        libc.umount2(target, MNT_DETACH)
        sys.exit(f"umount failed: errno {ctypes.get_errno()}")
    print(json.dumps({"mnt": mnt, "mb": mb, "ns": t1 - t0}), flush=True)

print("done", flush=True)
