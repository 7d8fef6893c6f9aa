/** The synthetic probes a config asks for, built once for the agent and for `doctor`. */
import type { AgentConfig } from '../config/schema.ts';
import { findExecutable, type HostFacts } from '../host/facts.ts';
import type { Logger } from '../log.ts';
import { HttpProbe } from './http.ts';
import { MountProbe } from './mount.ts';
import type { Probe } from './probe.ts';
import { SpawnProbe } from './spawn.ts';
import { WalProbe } from './wal.ts';

/**
 * Spawn, WAL, mount and HTTP probes from `probes` config. `includeDisabled` builds every
 * probe whatever the config enables (doctor reports on all of them).
 */
export function configuredProbes(
  p: AgentConfig['probes'],
  host: HostFacts,
  log: Logger,
  opts: { includeDisabled?: boolean } = {},
): Probe[] {
  const want = (enabled: boolean) => enabled || !!opts.includeDisabled;
  const probes: Probe[] = [];
  if (want(p.spawn.enabled))
    probes.push(
      new SpawnProbe({
        truePath: findExecutable(host, 'true'),
        count: p.spawn.count,
        extraFds: p.spawn.extraFds,
      }),
    );
  if (want(p.wal.enabled)) probes.push(new WalProbe(p.dir, p.wal.files));
  if (want(p.mount.enabled))
    probes.push(
      new MountProbe({
        uid: host.uid,
        mountPath: findExecutable(host, 'mount'),
        umountPath: findExecutable(host, 'umount'),
        baseDir: p.dir,
        types: p.mount.types,
        sizeMb: p.mount.sizeMb,
        log,
      }),
    );
  probes.push(new HttpProbe(p.http.targets));
  return probes;
}
