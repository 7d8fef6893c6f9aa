/**
 * A small ext4 of a workload's own, on a zram device (a block device in RAM):
 * its fsyncs take the kernel's real path (a journal commit by the
 * filesystem's jbd2 thread, writes to a block device), but other jobs' disk
 * load cannot step them. On a shared CI machine the suite's other PostgreSQL
 * instances load the disk, and a per-call fsync series on it stepped before
 * any change (docs/agent.md "Live end-to-end tests").
 *
 * zram, not a loop device over a file in /dev/shm: zram writes in the
 * submitter's context, while a loop device hands every write to a kernel
 * worker of ordinary priority, which the host's other load delayed by
 * milliseconds for whole test minutes. The journal thread itself runs at
 * real-time priority, one above the workloads (startWorkload), as they wait for it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

export interface RamExt4 {
  /** Unmount and remove the zram device. */
  close(): void;
}

const ZRAM = '/sys/class/zram-control';

function run(cmd: string, args: string[]): string | null {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) return `${cmd}: ${r.error.message}`;
  return r.status === 0
    ? null
    : `${cmd} ${args.join(' ')}: ${r.stderr.trim() || `exit ${r.status}`}`;
}

/** The pid of a kernel thread by its name, or null. */
function kthread(name: string): number | null {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name) return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/**
 * Mount a fresh `sizeMb` ext4 at `dir` (an existing, empty directory) on a
 * new zram device, its journal thread at SCHED_FIFO `priority`. Inode tables
 * and the journal are written up front (lazy initialisation would write in
 * the background for minutes). Returns why not when it cannot (no zram
 * module, no mkfs.ext4).
 */
export function mountRamExt4(dir: string, sizeMb = 64, priority = 11): RamExt4 | string {
  let id: string;
  try {
    id = readFileSync(`${ZRAM}/hot_add`, 'utf8').trim();
  } catch (err) {
    return `no zram device: ${(err as Error).message}`;
  }
  const dev = `/dev/zram${id}`;
  const remove = () => {
    try {
      writeFileSync(`${ZRAM}/hot_remove`, id);
    } catch {
      // still busy (a lazy unmount): the kernel frees it with the last user
    }
  };
  try {
    writeFileSync(`/sys/block/zram${id}/disksize`, `${sizeMb}M`);
  } catch (err) {
    remove();
    return `zram${id}: ${(err as Error).message}`;
  }
  const failed =
    run('mkfs.ext4', ['-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0', dev]) ??
    run('mount', [dev, dir]);
  if (failed) {
    remove();
    return failed;
  }
  const jbd2 = kthread(`jbd2/zram${id}-8`);
  const prio =
    jbd2 === null ? 'no jbd2 thread' : run('chrt', ['-f', '-p', String(priority), String(jbd2)]);
  if (prio)
    console.warn(`live host test: the journal thread of ${dev} stays at its priority (${prio})`);
  return {
    close() {
      if (run('umount', [dir])) run('umount', ['-l', dir]);
      remove();
    },
  };
}
