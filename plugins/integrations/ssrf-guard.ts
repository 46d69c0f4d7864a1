import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Server-side request forgery guard: every URL an integration fetches (each redirect hop too) is
 * checked here, and the connection is then pinned to the address that passed (see fetcher.ts).
 */

export interface NetworkPolicy {
  /** Admin opt-in for LAN sites: loopback, private and link-local become reachable; metadata never does. */
  allowPrivateNetwork: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (dns.lookup, as the OS would). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** Cloud instance-metadata endpoints: credentials live there, so they are refused even on an allowed LAN. */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

export class UrlNotAllowed extends Error {
  constructor(readonly url: string, reason: string) {
    super(reason);
    this.name = 'UrlNotAllowed';
  }
}

export class UrlUnresolvable extends Error {
  constructor(readonly hostname: string) {
    super(`The host ${hostname} could not be resolved`);
    this.name = 'UrlUnresolvable';
  }
}

export const defaultResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/** Why an address may not be fetched under the policy, or null when it may. */
export function addressRefusal(address: string, policy: NetworkPolicy): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  // An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it reaches.
  const parsed = ipaddr.process(address);
  if (METADATA_ADDRESSES.has(parsed.toNormalizedString()) || METADATA_ADDRESSES.has(parsed.toString())) return 'a cloud metadata address';
  const range = parsed.range();
  if (range === 'unicast') return null;
  if (policy.allowPrivateNetwork) return null;
  return `a ${range} address (allow_private_network is off)`;
}

/** Host of a URL as the resolver and the address checks want it (no IPv6 brackets, no trailing dot). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

/** Checks the URL's scheme and form, resolves its host and checks every address; returns the one to connect to. */
export async function checkUrl(url: URL, policy: NetworkPolicy, resolve: Resolver = defaultResolver): Promise<ResolvedAddress> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlNotAllowed(url.href, `the ${url.protocol} scheme is not fetched; only http and https are`);
  if (url.username || url.password) throw new UrlNotAllowed(url.href, 'URLs with embedded credentials are refused; set the integration credentials instead');
  const host = hostOf(url);
  if (METADATA_HOSTS.has(host)) throw new UrlNotAllowed(url.href, 'a cloud metadata host');
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(host)) addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new UrlUnresolvable(host);
    }
    if (addresses.length === 0) throw new UrlUnresolvable(host);
  }
  // Every answer must pass: an attacker's DNS could otherwise mix a public address with a private one.
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy);
    if (refusal) throw new UrlNotAllowed(url.href, `${host} resolves to ${refusal}`);
  }
  return addresses[0];
}
