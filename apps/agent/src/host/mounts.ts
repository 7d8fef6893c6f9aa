/**
 * Mount tables per mount namespace, cached briefly: fsync events carry a
 * kernel mount id and unmount events a path, and both need the mount point
 * and filesystem type as the traced process saw them (containers have their
 * own namespaces).
 */
import { mountNamespace, readMountinfo, type MountEntry } from './proc.ts';

interface Table {
  readAt: number;
  entries: MountEntry[];
  byId: Map<number, MountEntry>;
}

export class MountTable {
  private readonly tables = new Map<string, Table>();
  /** pid -> mount namespace, so a busy process costs one readlink per few seconds, not one per event */
  private readonly namespaces = new Map<number, { ns: string; at: number }>();

  constructor(private readonly maxAgeMs = 5_000) {}

  private namespaceOf(pid: number): string {
    const now = Date.now();
    const hit = this.namespaces.get(pid);
    if (hit && now - hit.at < this.maxAgeMs) return hit.ns;
    const ns = mountNamespace(pid) ?? 'self';
    if (this.namespaces.size > 4096) this.namespaces.clear();
    this.namespaces.set(pid, { ns, at: now });
    return ns;
  }

  private load(pid: number, fresh: boolean): Table | undefined {
    const ns = this.namespaceOf(pid);
    const cached = this.tables.get(ns);
    if (cached && !fresh && Date.now() - cached.readAt < this.maxAgeMs) return cached;
    // The process may be gone already; our own namespace is the best guess then.
    const entries = readMountinfo(pid) ?? readMountinfo('self');
    if (!entries) return cached;
    const table = { readAt: Date.now(), entries, byId: new Map(entries.map((e) => [e.id, e])) };
    if (this.tables.size > 64) this.tables.clear();
    this.tables.set(ns, table);
    return table;
  }

  /** Re-read now, so a later lookup still finds mounts that are gone by then. */
  refresh(pid: number): void {
    this.load(pid, true);
  }

  byId(pid: number, id: number): MountEntry | undefined {
    return this.load(pid, false)?.byId.get(id) ?? this.load(pid, true)?.byId.get(id);
  }

  /** The mount at exactly this mount point (the topmost when mounts are stacked). */
  atMountPoint(pid: number, mountPoint: string, fresh = false): MountEntry | undefined {
    const entries = this.load(pid, fresh)?.entries ?? [];
    for (let i = entries.length - 1; i >= 0; i--)
      if (entries[i]!.mountPoint === mountPoint) return entries[i];
    return undefined;
  }

  /** The mount a path lives on: the longest mount point that prefixes it. */
  containing(pid: number, path: string): MountEntry | undefined {
    let best: MountEntry | undefined;
    for (const e of this.load(pid, false)?.entries ?? []) {
      const mp = e.mountPoint;
      const inside = mp === '/' || path === mp || path.startsWith(`${mp}/`);
      if (inside && (!best || mp.length >= best.mountPoint.length)) best = e;
    }
    return best;
  }
}

/** Absolute path of `fsPath` (a path from the filesystem's root) as seen through mount `m`. */
export function pathThroughMount(m: MountEntry, fsPath: string): string {
  let rel = fsPath;
  if (m.root !== '/' && (rel === m.root || rel.startsWith(`${m.root}/`)))
    rel = rel.slice(m.root.length) || '/';
  if (m.mountPoint === '/') return rel;
  return rel === '/' ? m.mountPoint : `${m.mountPoint}${rel}`;
}

/**
 * Filesystem types of recent mounts, as the tracers saw the mount calls.
 * A fast unmount right after a mount can finish before the agent reads
 * mountinfo; this still knows what was mounted there.
 */
export class RecentMounts {
  private readonly types = new Map<string, string>();

  remember(mountPoint: string, fsType: string): void {
    if (!mountPoint || !fsType) return;
    this.types.delete(mountPoint);
    this.types.set(mountPoint, fsType);
    if (this.types.size > 1_000) this.types.delete(this.types.keys().next().value!);
  }

  typeOf(mountPoint: string): string | undefined {
    return this.types.get(mountPoint);
  }
}
