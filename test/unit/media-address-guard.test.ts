import assert from 'node:assert/strict';
import { BlockList, isIP } from 'node:net';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  classifyAddress,
  defaultAddressPolicy,
  formatIpv4,
  isRefusedPort,
  METADATA_ADDRESSES,
  parseIpv4,
  parseIpv6,
} from '../../src/media/address-guard.js';

// An independent oracle: the special-purpose IPv4 ranges (RFC 6890 and the brief), in Node's own
// BlockList, written out here rather than taken from the module under test.
const ORACLE_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.31.196.0/24',
  '192.52.193.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '192.175.48.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '168.63.129.16/32', // Azure wireserver (the one metadata endpoint outside the ranges above)
];
const oracle = new BlockList();
for (const cidr of ORACLE_V4) {
  const [net, prefix] = cidr.split('/');
  oracle.addSubnet(net, Number(prefix), 'ipv4');
}

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const v4 = u32.map(formatIpv4);
const inRange = (cidr: string) => {
  const [net, prefix] = cidr.split('/');
  const base = parseIpv4(net) as number;
  const size = 2 ** (32 - Number(prefix));
  return fc.integer({ min: 0, max: size - 1 }).map((o) => formatIpv4(base + o));
};
const hex16 = (n: number) => n.toString(16);
function mappedForms(ip: string): string[] {
  const n = parseIpv4(ip) as number;
  const hi = hex16(n >>> 16);
  const lo = hex16(n & 0xffff);
  return [
    `::ffff:${ip}`,
    `::FFFF:${ip}`,
    `::ffff:${hi}:${lo}`,
    `0:0:0:0:0:ffff:${hi}:${lo}`,
    `0000:0000:0000:0000:0000:ffff:${ip}`,
  ];
}

describe('address guard: IPv4', () => {
  const blockedRanges: [string, string][] = [
    ['10.0.0.0/8', 'private'],
    ['172.16.0.0/12', 'private'],
    ['192.168.0.0/16', 'private'],
    ['127.0.0.0/8', 'loopback'],
    ['169.254.0.0/16', 'link_local'],
    ['100.64.0.0/10', 'cgnat'],
    ['0.0.0.0/8', 'this_network'],
    ['224.0.0.0/4', 'multicast'],
    ['198.18.0.0/15', 'benchmarking'],
  ];
  for (const [cidr, category] of blockedRanges) {
    it(`blocks every address in ${cidr} as ${category}`, () => {
      fc.assert(
        fc.property(inRange(cidr), (ip) => {
          const v = classifyAddress(ip);
          assert.equal(v.allowed, false, ip);
          // A metadata endpoint inside the range (169.254.169.254, 100.100.100.200) has the more
          // specific name.
          assert.equal(v.category, METADATA_ADDRESSES.includes(ip) ? 'metadata' : category, ip);
        }),
        { numRuns: 300 },
      );
    });
  }

  it('names the well-known dangerous addresses', () => {
    const cases: [string, string][] = [
      ['169.254.169.254', 'metadata'],
      ['169.254.169.253', 'link_local'],
      ['168.63.129.16', 'metadata'],
      ['127.0.0.1', 'loopback'],
      ['0.0.0.0', 'this_network'],
      ['255.255.255.255', 'broadcast'],
      ['240.0.0.1', 'reserved'],
      ['192.0.2.10', 'documentation'],
      ['100.127.255.255', 'cgnat'],
      ['172.31.255.255', 'private'],
    ];
    for (const [ip, category] of cases)
      assert.deepEqual(classifyAddress(ip), { address: ip, allowed: false, category });
  });

  it('allows public addresses next to the blocked ranges', () => {
    for (const ip of [
      '8.8.8.8',
      '1.1.1.1',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '11.0.0.1',
      '223.255.255.255',
      '169.253.255.255',
      '192.169.0.1',
    ]) {
      assert.deepEqual(classifyAddress(ip), { address: ip, allowed: true, category: 'public' }, ip);
    }
  });

  it('agrees with an independent BlockList oracle on random addresses', () => {
    fc.assert(
      fc.property(v4, (ip) => {
        assert.equal(classifyAddress(ip).allowed, !oracle.check(ip, 'ipv4'), ip);
      }),
      { numRuns: 20_000 },
    );
  });

  it('parses exactly the dotted quads node:net accepts', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9.x]{1,16}$/), (s) => {
        assert.equal(parseIpv4(s) !== null, isIP(s) === 4, s);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('address guard: IPv6', () => {
  it('blocks loopback, unspecified, unique-local, link-local, site-local, multicast and documentation', () => {
    const cases: [string, string][] = [
      ['::1', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['[::1]', 'loopback'],
      ['::', 'unspecified'],
      ['fc00::1', 'unique_local'],
      ['fdff:ffff::1', 'unique_local'],
      ['fe80::1%eth0', 'link_local'],
      ['febf::1', 'link_local'],
      ['fec0::1', 'site_local'],
      ['ff02::1', 'multicast'],
      ['2001:db8::1', 'documentation'],
      ['3fff::1', 'documentation'],
      ['2001::1', 'protocol_assignment'],
      ['64:ff9b:1::1', 'nat64_local'],
      ['100::1', 'discard'],
      ['::2', 'this_network'],
      ['4000::1', 'reserved'],
    ];
    for (const [ip, category] of cases) {
      const v = classifyAddress(ip);
      assert.equal(v.allowed, false, ip);
      assert.equal(v.category, category, ip);
    }
  });

  it('allows public global unicast', () => {
    for (const ip of ['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888']) {
      assert.equal(classifyAddress(ip).allowed, true, ip);
    }
  });

  const group = fc.integer({ min: 0, max: 0xffff });
  const groups = (first: fc.Arbitrary<number>) =>
    fc.tuple(first, fc.array(group, { minLength: 7, maxLength: 7 })).map(([g, rest]) => [g, ...rest]);
  for (const [name, first, category] of [
    ['fc00::/7', fc.integer({ min: 0xfc00, max: 0xfdff }), 'unique_local'],
    ['fe80::/10', fc.integer({ min: 0xfe80, max: 0xfebf }), 'link_local'],
    ['ff00::/8', fc.integer({ min: 0xff00, max: 0xffff }), 'multicast'],
  ] as const) {
    it(`blocks every address in ${name}`, () => {
      fc.assert(
        fc.property(groups(first), (g) => {
          const v = classifyAddress(g.map(hex16).join(':'));
          assert.equal(v.allowed, false);
          assert.equal(v.category, category);
        }),
      );
    });
  }

  it('allows random global unicast outside the special ranges', () => {
    fc.assert(
      fc.property(groups(fc.integer({ min: 0x2400, max: 0x2fff })), (g) => {
        assert.equal(classifyAddress(g.map(hex16).join(':')).allowed, true);
      }),
    );
  });

  it('judges IPv4-mapped, NAT64 and 6to4 forms by the IPv4 address inside', () => {
    fc.assert(
      fc.property(v4, (ip) => {
        const expected = !oracle.check(ip, 'ipv4');
        for (const form of mappedForms(ip)) assert.equal(classifyAddress(form).allowed, expected, form);
        assert.equal(classifyAddress(`64:ff9b::${ip}`).allowed, expected, `nat64 ${ip}`);
        const n = parseIpv4(ip) as number;
        assert.equal(
          classifyAddress(`2002:${hex16(n >>> 16)}:${hex16(n & 0xffff)}::1`).allowed,
          expected,
          `6to4 ${ip}`,
        );
        // The deprecated IPv4-compatible form is never a plain destination.
        assert.equal(classifyAddress(`::${ip}`).allowed, false);
      }),
      { numRuns: 3000 },
    );
    assert.equal(classifyAddress('::ffff:127.0.0.1').category, 'loopback');
    assert.equal(classifyAddress('::ffff:169.254.169.254').category, 'metadata');
    assert.equal(classifyAddress('64:ff9b::a9fe:a9fe').category, 'metadata');
    assert.equal(classifyAddress('64:ff9b::10.0.0.1').category, 'private');
    assert.equal(classifyAddress('::ffff:8.8.8.8').embeddedIpv4, '8.8.8.8');
  });

  it('classifies every spelling of an address alike (compressed, expanded, upper case)', () => {
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (g) => {
        const expanded = g.map((x) => x.toString(16).padStart(4, '0')).join(':');
        // Node's URL parser writes the canonical compressed form.
        const compressed = new URL(`http://[${expanded}]/`).hostname.slice(1, -1);
        assert.deepEqual(parseIpv6(compressed), g);
        const a = classifyAddress(expanded);
        assert.deepEqual(classifyAddress(compressed), a);
        assert.deepEqual(classifyAddress(expanded.toUpperCase()), a);
      }),
      { numRuns: 3000 },
    );
  });

  it('parses only what node:net accepts as IPv6', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f:.]{1,24}$/), (s) => {
        if (parseIpv6(s) !== null) assert.equal(isIP(s), 6, s);
      }),
      { numRuns: 10_000 },
    );
    for (const bad of [
      ':::',
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      '::ffff:1.2.3',
      '12345::',
      'fe80::1%',
      'g::1',
    ]) {
      assert.equal(parseIpv6(bad), null, bad);
    }
  });
});

describe('address guard: policy', () => {
  it('refuses text that is not an IP address', () => {
    for (const s of ['', 'localhost', '127.1', '0x7f.0.0.1', '1.2.3.04', '999.1.1.1']) {
      assert.equal(classifyAddress(s).category, 'invalid', s);
      assert.equal(defaultAddressPolicy(true)(s).allowed, false, s);
    }
  });

  it('allowPrivate lets private addresses through, not garbage and not cloud metadata', () => {
    const open = defaultAddressPolicy(true);
    for (const ip of ['10.1.2.3', '127.0.0.1', '::1', '169.254.1.1', 'fd00::1'])
      assert.equal(open(ip).allowed, true, ip);
    assert.equal(defaultAddressPolicy(false)('10.1.2.3').allowed, false);
    for (const ip of [
      ...METADATA_ADDRESSES,
      '::ffff:169.254.169.254',
      'fd00:ec2::254',
      '64:ff9b::a9fe:a9fe',
    ]) {
      assert.deepEqual([ip, open(ip).allowed, open(ip).category], [ip, false, 'metadata']);
    }
  });

  // The table of the issue: one policy for every outgoing request (media fetches, webhooks).
  const TABLE: [address: string, allowed: boolean, category: string, allowedWithPrivate: boolean][] = [
    ['127.0.0.1', false, 'loopback', true],
    ['127.255.255.254', false, 'loopback', true],
    ['::1', false, 'loopback', true],
    ['::ffff:127.0.0.1', false, 'loopback', true],
    ['::ffff:7f00:1', false, 'loopback', true],
    ['10.0.0.1', false, 'private', true],
    ['10.255.255.255', false, 'private', true],
    ['172.16.0.1', false, 'private', true],
    ['172.31.255.255', false, 'private', true],
    ['192.168.0.1', false, 'private', true],
    ['192.168.255.255', false, 'private', true],
    ['169.254.169.254', false, 'metadata', false],
    ['169.254.0.1', false, 'link_local', true],
    ['fc00::1', false, 'unique_local', true],
    ['fd12:3456::1', false, 'unique_local', true],
    ['fd00:ec2::254', false, 'metadata', false],
    ['fe80::1', false, 'link_local', true],
    ['febf:ffff::1', false, 'link_local', true],
    ['100.64.0.1', false, 'cgnat', true],
    ['100.127.255.255', false, 'cgnat', true],
    ['100.100.100.200', false, 'metadata', false],
    ['0.0.0.0', false, 'this_network', true],
    ['0.1.2.3', false, 'this_network', true],
    ['::', false, 'unspecified', true],
    ['64:ff9b::7f00:1', false, 'loopback', true],
    ['64:ff9b::127.0.0.1', false, 'loopback', true],
    ['64:ff9b::a00:1', false, 'private', true],
    ['::ffff:10.0.0.1', false, 'private', true],
    ['2002:7f00:1::', false, 'loopback', true],
    ['not-an-ip', false, 'invalid', false],
    ['8.8.8.8', true, 'public', true],
    ['1.1.1.1', true, 'public', true],
    ['93.184.215.14', true, 'public', true],
    ['172.32.0.1', true, 'public', true],
    ['100.128.0.1', true, 'public', true],
    ['::ffff:8.8.8.8', true, 'public', true],
    ['64:ff9b::808:808', true, 'public', true],
    ['2606:4700:4700::1111', true, 'public', true],
    ['2a00:1450:4001:80b::200e', true, 'public', true],
  ];
  for (const [ip, allowed, category, allowedWithPrivate] of TABLE) {
    it(`${ip}: ${allowed ? 'allowed' : `refused (${category})`}`, () => {
      const v = defaultAddressPolicy(false)(ip);
      assert.equal(v.allowed, allowed);
      assert.equal(v.category, category);
      assert.equal(defaultAddressPolicy(true)(ip).allowed, allowedWithPrivate);
    });
  }
});

describe('address guard: ports', () => {
  it('refuses port 0, out-of-range ports and the Fetch standard bad ports; allows the usual ones', () => {
    for (const port of [0, -1, 65536, 1.5, 21, 22, 23, 25, 110, 143, 465, 587, 993, 6000, 6667, 10080])
      assert.equal(isRefusedPort(port), true, String(port));
    for (const port of [80, 443, 8000, 8080, 8443, 3000, 9000, 32768, 65535])
      assert.equal(isRefusedPort(port), false, String(port));
  });
});
