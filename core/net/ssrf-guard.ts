import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { badRequest } from '../errors.js';

/**
 * Server-side request forgery guard for every outbound request Hearth makes on an admin's behalf
 * (website integrations, OIDC providers): each URL (each redirect hop too) is checked here, and the
 * connection then goes to the address that passed (see guarded-request.ts).
 */

export interface NetworkPolicy {
  /** Admin opt-in for LAN hosts: loopback, private and link-local become reachable; metadata never does. */
  allowPrivateNetwork: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (dns.lookup, as the OS would). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** How host names are resolved and checked addresses reached. */
export interface Network {
  resolve: Resolver;
  /** The address a connection to a checked address goes to: that address itself, except where a test stands a loopback server in for a public host. */
  dial: (checked: ResolvedAddress) => ResolvedAddress;
}

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/** Cloud instance-metadata endpoints: credentials live there, so they are refused in every form, even on an allowed LAN. */
const METADATA_RANGES = [
  '169.254.169.254/32', // AWS, Azure, GCP, OpenStack, Oracle, DigitalOcean, Hetzner…
  '169.254.170.2/32', // AWS ECS task credentials
  '169.254.170.23/32', // AWS EKS Pod Identity
  '169.254.0.23/32', // Tencent Cloud
  '100.100.100.200/32', // Alibaba Cloud
  '192.0.0.192/32', // Oracle Cloud (legacy)
  '168.63.129.16/32', // Azure WireServer
  'fd00:ec2::254/128', // AWS (IPv6)
  'fd00:ec2::23/128', // AWS EKS Pod Identity (IPv6)
  'fd20:ce::254/128', // GCP (IPv6)
  'fe80::a9fe:a9fe/128', // OpenStack (IPv6)
].map((cidr) => ipaddr.parseCIDR(cidr));
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'metadata.tencentyun.com']);

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

const defaultResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

export const systemNetwork: Network = { resolve: defaultResolver, dial: (checked) => checked };

const v4 = (bytes: number[]): ipaddr.IPv4 => new ipaddr.IPv4(bytes);
const cidr = (text: string) => ipaddr.IPv6.parseCIDR(text);

/**
 * IPv6 forms that carry an IPv4 address. A "destination" form reaches the IPv4 host itself (through the
 * kernel or a NAT64 gateway), so it is judged exactly as that IPv4 address. A tunnel form (6to4, Teredo,
 * local-use NAT64 whose prefix length is the site's choice) is never ordinary public unicast: it needs
 * allow_private_network, and every IPv4 it may carry is judged too (metadata refused always).
 */
const EMBEDDINGS: { form: string; range: [ipaddr.IPv6, number]; destination: boolean; carried: (b: number[]) => ipaddr.IPv4[] }[] = [
  { form: 'IPv4-mapped', range: cidr('::ffff:0:0/96'), destination: true, carried: (b) => [v4(b.slice(12))] },
  { form: 'IPv4-translated', range: cidr('::ffff:0:0:0/96'), destination: true, carried: (b) => [v4(b.slice(12))] },
  // :: and ::1 keep their IPv6 meaning (unspecified, loopback); the rest of ::/96 is the deprecated IPv4-compatible form.
  { form: 'IPv4-compatible', range: cidr('::/96'), destination: true, carried: (b) => [v4(b.slice(12))] },
  { form: 'NAT64', range: cidr('64:ff9b::/96'), destination: true, carried: (b) => [v4(b.slice(12))] },
  {
    form: 'local-use NAT64',
    range: cidr('64:ff9b:1::/48'),
    destination: false,
    // RFC 6052 positions for prefixes of /48, /56, /64 and /96 (bits 64-71 are always zero).
    carried: (b) => [[...b.slice(6, 8), ...b.slice(9, 11)], [b[7], ...b.slice(9, 12)], b.slice(9, 13), b.slice(12)].map(v4),
  },
  { form: '6to4', range: cidr('2002::/16'), destination: false, carried: (b) => [v4(b.slice(2, 6))] },
  // Teredo: the server's address, and the client's stored inverted.
  { form: 'Teredo', range: cidr('2001::/32'), destination: false, carried: (b) => [v4(b.slice(4, 8)), v4(b.slice(12).map((x) => x ^ 0xff))] },
];

function embeddingOf(ip: ipaddr.IPv6): (typeof EMBEDDINGS)[number] | undefined {
  const text = ip.toNormalizedString();
  if (text === '0:0:0:0:0:0:0:0' || text === '0:0:0:0:0:0:0:1') return undefined;
  return EMBEDDINGS.find((embedding) => ip.match(embedding.range));
}

const isMetadata = (ip: Ip): boolean => METADATA_RANGES.some((range) => ip.kind() === range[0].kind() && ip.match(range));

/** Why one plain address may not be reached under the policy, or null. */
function plainRefusal(ip: Ip, policy: NetworkPolicy): string | null {
  if (isMetadata(ip)) return 'a cloud metadata address';
  const range = ip.range();
  if (range === 'unicast' || policy.allowPrivateNetwork) return null;
  return `${/^[aeiou]/i.test(range) ? 'an' : 'a'} ${range} address (allow_private_network is off)`;
}

/** Why an address may not be fetched under the policy, or null when it may. */
export function addressRefusal(address: string, policy: NetworkPolicy): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const ip = ipaddr.parse(address);
  const embedding = ip.kind() === 'ipv6' ? embeddingOf(ip as ipaddr.IPv6) : undefined;
  if (!embedding) return plainRefusal(ip, policy);
  const carried = embedding.carried(ip.toByteArray());
  // Metadata first: with several candidate positions, a harmless reading must not hide a metadata one.
  const metadata = carried.find(isMetadata);
  if (metadata) return `a cloud metadata address: ${metadata.toString()} in ${embedding.form} form`;
  for (const address of carried) {
    const refusal = plainRefusal(address, policy);
    if (refusal) return `${refusal}: ${address.toString()} in ${embedding.form} form`;
  }
  return embedding.destination ? null : plainRefusal(ip, policy);
}

/** Host of a URL as the resolver and the address checks want it (no IPv6 brackets, no trailing dot). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

/** Checks the URL's scheme and form, resolves its host and checks every address; returns the one to connect to. */
export async function checkUrl(url: URL, policy: NetworkPolicy, resolve: Resolver = defaultResolver): Promise<ResolvedAddress> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlNotAllowed(url.href, `the ${url.protocol} scheme is not fetched; only http and https are`);
  if (url.username || url.password) throw new UrlNotAllowed(url.href, 'URLs with embedded credentials are refused');
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

/** checkUrl for a URL an admin is saving: a refusal is a 400 on that field (url_not_allowed, url_unresolvable). */
export async function assertUrlAllowed(url: URL, policy: NetworkPolicy, resolve: Resolver, field: string): Promise<void> {
  const name = field.replace(/^body\./, '');
  try {
    await checkUrl(url, policy, resolve);
  } catch (error) {
    if (error instanceof UrlNotAllowed) throw badRequest('url_not_allowed', `${name} is not allowed: ${error.message}`, field);
    if (error instanceof UrlUnresolvable) throw badRequest('url_unresolvable', `${name}: ${error.message}`, field);
    throw error;
  }
}
