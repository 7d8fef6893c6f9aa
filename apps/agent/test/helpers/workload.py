"""Test workload for the agent: fsyncs, spawns, and a tmpfs mount + unmount.

Usage: workload.py COMM DIR [--wait]
Sets its process name (comm) to COMM so the agent can filter on it. With
--wait it prints "ready" and waits for a line on stdin before working (so a
tracer can attach first). Prints "done" when finished, then exits.
"""
import ctypes
import os
import subprocess
import sys

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NAME = 15
MNT_DETACH = 2

comm, base = sys.argv[1], sys.argv[2]
libc.prctl(PR_SET_NAME, comm.encode(), 0, 0, 0)
if "--wait" in sys.argv:
    print("ready", flush=True)
    sys.stdin.readline()

data_dir = os.path.join(base, "data")
os.makedirs(data_dir, exist_ok=True)

# 20 file fsyncs + 5 directory fsyncs, like a small database commit stream.
for i in range(20):
    with open(os.path.join(data_dir, f"f{i}"), "wb") as f:
        f.write(os.urandom(4096))
        f.flush()
        os.fsync(f.fileno())
dfd = os.open(data_dir, os.O_RDONLY)
for _ in range(5):
    os.fsync(dfd)
os.close(dfd)

# 10 spawns of /bin/true (subprocess uses vfork/clone+exec).
for _ in range(10):
    subprocess.run(["/bin/true"], check=True)

# Mount a tmpfs, dirty 4 MB in it, unmount it from this process.
mnt = os.path.join(base, "mnt")
os.makedirs(mnt, exist_ok=True)
if libc.mount(b"onset-test", mnt.encode(), b"tmpfs", 0, b"size=16m") != 0:
    sys.exit(f"mount failed: errno {ctypes.get_errno()}")
with open(os.path.join(mnt, "blob"), "wb") as f:
    f.write(b"x" * (4 << 20))
if libc.umount2(mnt.encode(), 0) != 0:
    libc.umount2(mnt.encode(), MNT_DETACH)
    sys.exit(f"umount failed: errno {ctypes.get_errno()}")

print("done", flush=True)
