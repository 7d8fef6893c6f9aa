/**
 * Where webhooks may connect (SSRF guard). A webhook URL is chosen by whoever
 * holds an admin token — or, in open mode, by anything that can reach the API —
 * so without a policy it can point Onset at cloud metadata, the database port
 * or Onset's own API and read the answer back through the delivery log.
 *
 * Two checks: at registration (scheme, credentials in the URL, forbidden host
 * names and address literals in any spelling the URL parser normalises) and at
 * connect time, where the host is resolved and every answer must be a public
 * unicast address. The connection goes to the address that was checked (the
 * check is the socket's `lookup`), so a DNS answer that changes between the
 * check and the connect cannot slip through.
 *
 * ONSET_WEBHOOK_ALLOW lists exceptions: CIDRs or addresses ("10.0.0.0/8",
 * "::1") and host names ("hooks.internal", "*.corp.example"), comma-separated.
 */
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface EgressPolicy {
  /** Allowlisted ranges (parsed CIDRs). */
  cidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][];
  /** Allowlisted host names: exact ("a.b") or suffix ("*.b" → ".b"). */
  hosts: string[];
  /** Name resolution; injectable so tests can change the answer between check and connect. */
  resolve: (hostname: string) => Promise<ResolvedAddress[]>;
}

export class EgressRefused extends Error {
  override name = 'EgressRefused';
}

const ENV_KEY = 'ONSET_WEBHOOK_ALLOW';

/** Names that mean "this machine" or "the cloud metadata service" whatever DNS says. */
const FORBIDDEN_NAMES = [
  'localhost',
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
];

/** Cloud metadata endpoints: refused even for allowlisted host names (only an explicit CIDR permits them). */
const METADATA_ADDRESSES = ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'];

const normalHost = (h: string) =>
  h
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/** Parse an allowlist spec ("10.0.0.0/8, ::1, hooks.internal, *.corp.example"). */
export function egressPolicy(
  spec: string | undefined = process.env[ENV_KEY],
  resolve: EgressPolicy['resolve'] = systemResolve,
): EgressPolicy {
  const policy: EgressPolicy = { cidrs: [], hosts: [], resolve };
  for (const raw of (spec ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    if (entry.includes('/')) {
      try {
        policy.cidrs.push(ipaddr.parseCIDR(entry));
      } catch {
        throw new Error(`${ENV_KEY}: "${entry}" is not a valid CIDR`);
      }
    } else if (ipaddr.isValid(normalHost(entry)) && net.isIP(normalHost(entry))) {
      const addr = ipaddr.parse(normalHost(entry));
      policy.cidrs.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else policy.hosts.push(normalHost(entry).replace(/^\*/, ''));
  }
  return policy;
}

function hostAllowed(policy: EgressPolicy, hostname: string): boolean {
  const h = normalHost(hostname);
  return policy.hosts.some((p) => (p.startsWith('.') ? h.endsWith(p) : h === p));
}

function cidrAllowed(policy: EgressPolicy, addr: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return policy.cidrs.some(
    ([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits),
  );
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/**
 * Why an address may not be reached ("loopback", "private", …), or null for a
 * public unicast address. IPv4-mapped IPv6 is judged as the IPv4 it carries;
 * IPv6 outside global unicast (2000::/3) and every special-purpose range
 * (NAT64, 6to4, Teredo, which can embed private IPv4) are refused.
 */
export function addressProblem(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const addr = ipaddr.process(address);
  if (METADATA_ADDRESSES.includes(addr.toString())) return 'cloud metadata';
  const range = addr.range();
  if (range !== 'unicast') return range;
  if (addr.kind() === 'ipv6' && !(addr as ipaddr.IPv6).match(GLOBAL_UNICAST_V6))
    return 'not global unicast';
  return null;
}

/** Throws EgressRefused unless `address` (reached through `hostname`) is permitted. */
export function checkAddress(policy: EgressPolicy, hostname: string, address: string): void {
  const problem = addressProblem(address);
  if (!problem) return;
  const addr = ipaddr.process(address);
  if (cidrAllowed(policy, addr)) return;
  if (problem !== 'cloud metadata' && hostAllowed(policy, hostname)) return;
  const via = normalHost(hostname) === addr.toString() ? '' : ` (${hostname})`;
  throw new EgressRefused(
    `webhook target ${addr.toString()}${via} is ${problem}; refused by the egress policy (${ENV_KEY} lists permitted exceptions)`,
  );
}

/**
 * The static checks on a webhook URL, at registration and again before every
 * delivery: http(s), no credentials, no forbidden host names, and an address
 * literal (the URL parser has already turned 2130706433, 0x7f000001, 127.1 and
 * [::ffff:127.0.0.1] into their canonical forms) must be permitted.
 * Returns the normalised URL.
 */
export function checkWebhookTarget(policy: EgressPolicy, text: string): URL {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new EgressRefused(`url "${text.slice(0, 100)}" is not an absolute URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new EgressRefused(
      `webhook url must be http or https, not ${u.protocol.replace(':', '')}`,
    );
  if (u.username || u.password)
    throw new EgressRefused(
      'webhook url must not contain credentials (user:password@); use the secret field or a token in the path',
    );
  const host = normalHost(u.hostname);
  if (!host) throw new EgressRefused('webhook url has no host');
  if (net.isIP(host)) checkAddress(policy, host, host);
  else if (
    FORBIDDEN_NAMES.some((n) => host === n || host.endsWith(`.${n}`)) &&
    !hostAllowed(policy, host)
  )
    throw new EgressRefused(
      `webhook host "${host}" is refused by the egress policy (${ENV_KEY} lists permitted exceptions)`,
    );
  return u;
}

/**
 * A socket `lookup` that resolves, checks every answer and hands the socket
 * only checked addresses: the connection goes where the check looked.
 */
export function guardedLookup(policy: EgressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    policy.resolve(hostname).then(
      (answers) => {
        try {
          if (answers.length === 0) throw new EgressRefused(`${hostname} has no address`);
          for (const a of answers) checkAddress(policy, hostname, a.address);
          const wanted = options.family === 6 || options.family === 4 ? options.family : 0;
          const usable = answers.filter((a) => !wanted || a.family === wanted);
          if (usable.length === 0)
            throw new EgressRefused(`${hostname} has no IPv${wanted} address`);
          if (options.all) callback(null, usable);
          else callback(null, usable[0]!.address, usable[0]!.family);
        } catch (err) {
          callback(err as NodeJS.ErrnoException, '', 0);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

const dispatchers = new WeakMap<EgressPolicy, Agent>();

/** An HTTP client whose every connection passes the policy (one per policy, connections reused). */
export function egressDispatcher(policy: EgressPolicy): Agent {
  let agent = dispatchers.get(policy);
  if (!agent) {
    agent = new Agent({ connect: { lookup: guardedLookup(policy) } });
    dispatchers.set(policy, agent);
  }
  return agent;
}

let fromEnv: { spec: string | undefined; policy: EgressPolicy } | undefined;

/** The operator's policy (ONSET_WEBHOOK_ALLOW), re-read when the variable changes. */
export function currentEgressPolicy(): EgressPolicy {
  const spec = process.env[ENV_KEY];
  if (!fromEnv || fromEnv.spec !== spec) fromEnv = { spec, policy: egressPolicy(spec) };
  return fromEnv.policy;
}

/** What a receiver answered, safe to store and show: no control characters or lone surrogates, bounded. */
export function sanitiseResponse(text: string, maxChars: number): string {
  return (
    text
      .slice(0, maxChars)
      .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd')
  );
}
