import { describe, expect, it } from 'vitest';
import { addressRefusal, checkUrl, UrlNotAllowed } from './ssrf-guard.js';
import { loopbackNetwork } from '../../test/fixtures/loopback-network.js';

/** The SSRF guard's decision on literal addresses, in every form that carries an IPv4 address; nothing is connected to. */

const closed = { allowPrivateNetwork: false };
const lan = { allowPrivateNetwork: true };

/** public: allowed under both policies; private: only with allow_private_network; metadata: never. */
type Verdict = 'public' | 'private' | 'metadata';

const TABLE: [address: string, verdict: Verdict, why: string][] = [
  ['8.8.8.8', 'public', 'plain public IPv4'],
  ['2001:4860:4860::8888', 'public', 'plain public IPv6'],
  ['127.0.0.1', 'private', 'loopback'],
  ['::1', 'private', 'IPv6 loopback'],
  ['::', 'private', 'unspecified'],
  ['0.0.0.0', 'private', 'unspecified IPv4'],
  ['10.0.0.1', 'private', 'RFC 1918'],
  ['172.16.0.1', 'private', 'RFC 1918'],
  ['192.168.0.1', 'private', 'RFC 1918'],
  ['100.64.0.1', 'private', 'CGNAT'],
  ['169.254.1.1', 'private', 'link-local'],
  ['fc00::1', 'private', 'unique local'],
  ['fe80::1', 'private', 'IPv6 link-local'],
  ['224.0.0.1', 'private', 'multicast'],
  ['ff02::1', 'private', 'IPv6 multicast'],
  // Metadata endpoints, plain.
  ['169.254.169.254', 'metadata', 'AWS, Azure, GCP, OpenStack…'],
  ['169.254.170.2', 'metadata', 'AWS ECS task credentials'],
  ['169.254.170.23', 'metadata', 'AWS EKS Pod Identity'],
  ['169.254.0.23', 'metadata', 'Tencent Cloud'],
  ['100.100.100.200', 'metadata', 'Alibaba Cloud'],
  ['192.0.0.192', 'metadata', 'Oracle Cloud (legacy)'],
  ['168.63.129.16', 'metadata', 'Azure WireServer (a public address)'],
  ['fd00:ec2::254', 'metadata', 'AWS IPv6'],
  ['fd00:ec2::23', 'metadata', 'AWS EKS Pod Identity IPv6'],
  ['fd20:ce::254', 'metadata', 'GCP IPv6'],
  ['fe80::a9fe:a9fe', 'metadata', 'OpenStack IPv6'],
  // IPv4-mapped ::ffff:0:0/96.
  ['::ffff:127.0.0.1', 'private', 'mapped loopback'],
  ['::ffff:7f00:1', 'private', 'mapped loopback, hex'],
  ['::ffff:a9fe:a9fe', 'metadata', 'mapped metadata'],
  ['::ffff:808:808', 'public', 'mapped public'],
  // IPv4-compatible ::/96 (deprecated).
  ['::7f00:1', 'private', 'compatible loopback'],
  ['::127.0.0.1', 'private', 'compatible loopback, dotted'],
  ['::a00:1', 'private', 'compatible 10.0.0.1'],
  ['::a9fe:a9fe', 'metadata', 'compatible metadata'],
  ['::169.254.169.254', 'metadata', 'compatible metadata, dotted'],
  ['::6464:64c8', 'metadata', 'compatible Alibaba metadata'],
  // IPv4-translated ::ffff:0:0:0/96.
  ['::ffff:0:7f00:1', 'private', 'translated loopback'],
  ['::ffff:0:a9fe:a9fe', 'metadata', 'translated metadata'],
  // NAT64 well-known prefix 64:ff9b::/96: judged as the IPv4 it reaches, so DNS64 networks keep public sites.
  ['64:ff9b::7f00:1', 'private', 'NAT64 loopback'],
  ['64:ff9b::a00:1', 'private', 'NAT64 10.0.0.1'],
  ['64:ff9b::a9fe:a9fe', 'metadata', 'NAT64 metadata'],
  ['64:ff9b::169.254.169.254', 'metadata', 'NAT64 metadata, dotted'],
  ['64:ff9b::a9fe:aa02', 'metadata', 'NAT64 ECS credentials'],
  ['64:ff9b::808:808', 'public', 'NAT64 public'],
  // Local-use NAT64 64:ff9b:1::/48: the site picks the prefix length, so every RFC 6052 position is judged.
  ['64:ff9b:1::a9fe:a9fe', 'metadata', 'local-use NAT64 /96 metadata'],
  ['64:ff9b:1:0:a9:fea9:fe00:0', 'metadata', 'local-use NAT64 /64 metadata'],
  ['64:ff9b:1:a9:fe:a9fe::', 'metadata', 'local-use NAT64 /56 metadata'],
  ['64:ff9b:1:a9fe:a9:fe00::', 'metadata', 'local-use NAT64 /48 metadata'],
  ['64:ff9b:1::808:808', 'private', 'local-use NAT64 public: not ordinary public unicast'],
  // 6to4 2002::/16.
  ['2002:a9fe:a9fe::1', 'metadata', '6to4 metadata'],
  ['2002:7f00:1::1', 'private', '6to4 loopback'],
  ['2002:808:808::1', 'private', '6to4 public: a tunnel, not ordinary public unicast'],
  // Teredo 2001::/32: the server's address, and the client's inverted.
  ['2001:0:a9fe:a9fe::1', 'metadata', 'Teredo server metadata'],
  ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata', 'Teredo client metadata (inverted 169.254.169.254)'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'private', 'Teredo client loopback (inverted 127.0.0.1)'],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'private', 'Teredo public: a tunnel'],
];

describe('the SSRF guard, address by address', () => {
  it.each(TABLE)('%s is %s (%s)', (address, verdict) => {
    const underDefault = addressRefusal(address, closed);
    const underLan = addressRefusal(address, lan);
    if (verdict === 'public') {
      expect(underDefault).toBeNull();
      expect(underLan).toBeNull();
    } else if (verdict === 'private') {
      expect(underDefault).toMatch(/allow_private_network is off/);
      expect(underLan).toBeNull();
    } else {
      expect(underDefault).toMatch(/metadata/);
      expect(underLan).toMatch(/metadata/);
    }
  });

  it('names the IPv4 address and the form that carried it', () => {
    expect(addressRefusal('64:ff9b::a9fe:a9fe', lan)).toBe('a cloud metadata address: 169.254.169.254 in NAT64 form');
    expect(addressRefusal('::7f00:1', closed)).toBe('a loopback address (allow_private_network is off): 127.0.0.1 in IPv4-compatible form');
  });

  it('judges URL literals and every DNS answer in the same way, without resolving a literal', async () => {
    const network = loopbackNetwork({
      'nat64-metadata.test': ['64:ff9b::a9fe:a9fe'],
      'compat-loopback.test': ['::7f00:1'],
      'dns64-public.test': ['64:ff9b::808:808'],
    });
    const refusal = (url: string, policy = lan) => checkUrl(new URL(url), policy, network.resolve).then(() => null, (error: Error) => error);
    for (const url of ['http://[::a9fe:a9fe]/', 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', 'http://[::ffff:0:a9fe:a9fe]/', 'http://[2002:a9fe:a9fe::]/', 'http://nat64-metadata.test/']) {
      const error = await refusal(url);
      expect(error, url).toBeInstanceOf(UrlNotAllowed);
      expect(error!.message).toMatch(/metadata/);
    }
    for (const url of ['http://[::7f00:1]/', 'http://[64:ff9b::7f00:1]/', 'http://compat-loopback.test/']) {
      expect(await refusal(url, closed), url).toBeInstanceOf(UrlNotAllowed);
      expect(await refusal(url, lan), url).toBeNull();
    }
    expect(await checkUrl(new URL('http://dns64-public.test/'), closed, network.resolve)).toEqual({ address: '64:ff9b::808:808', family: 6 });
    expect(network.dialled).toEqual([]);
  });
});
