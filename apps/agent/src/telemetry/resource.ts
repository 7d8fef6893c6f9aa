/**
 * The agent's OpenTelemetry resource: who is measuring. Onset groups latency
 * into cohorts by `os.version` (kernel release), `host.arch` and
 * `dependency.*`, so these always come along.
 *
 * Precedence, lowest first: host facts, the config file's `resource` and
 * `dependencies`, OTEL_RESOURCE_ATTRIBUTES, the service name (config file <
 * OTEL_SERVICE_NAME < --service-name, resolved in config/load.ts), and
 * --resource / --dependency flags.
 */
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { HostFacts } from '../host/facts.ts';

export interface ResourceSettings {
  serviceName: string;
  /** Already merged from config file, env and flags (dependency.* included). */
  attributes: Record<string, string>;
}

export function hostAttributes(host: HostFacts): Record<string, string> {
  return {
    'host.name': host.hostname,
    'os.type': 'linux',
    'os.version': host.kernelRelease,
    'host.arch': host.arch,
  };
}

export function buildResource(host: HostFacts, settings: ResourceSettings): Resource {
  return resourceFromAttributes({
    ...hostAttributes(host),
    ...settings.attributes,
    'service.name': settings.serviceName,
    'telemetry.sdk.language': 'nodejs',
    'telemetry.sdk.name': 'onset-agent',
  });
}
