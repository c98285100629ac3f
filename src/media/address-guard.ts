// The address and port policy of the guarded outgoing HTTP client (http-client.ts): may the service
// open a connection to this address and port on a user's behalf? Anything that is not plainly a
// public unicast address is refused: loopback, private, link-local, CGNAT, multicast, reserved,
// documentation ranges, and the IPv6 forms that embed such an IPv4 address (mapped, NAT64, 6to4).
// Cloud metadata endpoints are refused even when the operator allows private addresses. No I/O here.

export type AddressCategory =
  | 'public'
  | 'invalid'
  | 'unspecified'
  | 'this_network'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link_local'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'unique_local'
  | 'site_local'
  | 'nat64_local'
  | 'discard'
  | 'protocol_assignment'
  | 'metadata';

export interface AddressVerdict {
  /** The address as classified (IPv4 dotted quad or IPv6 text without a zone). */
  address: string;
  allowed: boolean;
  category: AddressCategory;
  /** For IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4): that address. */
  embeddedIpv4?: string;
}

type V4Rule = readonly [base: number, prefix: number, category: AddressCategory];

// Ordered: the first match wins (255.255.255.255 before 240.0.0.0/4).
const V4_BLOCKED: readonly V4Rule[] = [
  [ip4(0, 0, 0, 0), 8, 'this_network'],
  [ip4(10, 0, 0, 0), 8, 'private'],
  [ip4(100, 64, 0, 0), 10, 'cgnat'],
  [ip4(127, 0, 0, 0), 8, 'loopback'],
  [ip4(169, 254, 0, 0), 16, 'link_local'],
  [ip4(172, 16, 0, 0), 12, 'private'],
  [ip4(192, 0, 0, 0), 24, 'protocol_assignment'],
  [ip4(192, 0, 2, 0), 24, 'documentation'],
  [ip4(192, 31, 196, 0), 24, 'protocol_assignment'],
  [ip4(192, 52, 193, 0), 24, 'protocol_assignment'],
  [ip4(192, 88, 99, 0), 24, 'reserved'],
  [ip4(192, 168, 0, 0), 16, 'private'],
  [ip4(192, 175, 48, 0), 24, 'protocol_assignment'],
  [ip4(198, 18, 0, 0), 15, 'benchmarking'],
  [ip4(198, 51, 100, 0), 24, 'documentation'],
  [ip4(203, 0, 113, 0), 24, 'documentation'],
  [ip4(224, 0, 0, 0), 4, 'multicast'],
  [ip4(255, 255, 255, 255), 32, 'broadcast'],
  [ip4(240, 0, 0, 0), 4, 'reserved'],
];

/** The IPv4 ranges refused by default, as CIDR text (for documentation and tests). */
export const BLOCKED_IPV4_RANGES: readonly { cidr: string; category: AddressCategory }[] = V4_BLOCKED.map(
  ([base, prefix, category]) => ({ cidr: `${formatIpv4(base)}/${prefix}`, category }),
);

function ip4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function inV4(addr: number, base: number, prefix: number): boolean {
  if (prefix === 0) return true;
  const mask = (0xffffffff << (32 - prefix)) >>> 0;
  return (addr & mask) >>> 0 === (base & mask) >>> 0;
}

export function formatIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Strict dotted-quad parser (no octal, hex or shortened forms; URL parsing normalises those). */
export function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    n = n * 256 + v;
  }
  return n >>> 0;
}

/** Parses IPv6 text (compressed, expanded, embedded IPv4 tail, optional %zone) into 8 groups. */
export function parseIpv6(text: string): number[] | null {
  let s = text;
  const zone = s.indexOf('%');
  if (zone >= 0) {
    if (zone === s.length - 1) return null;
    s = s.slice(0, zone);
  }
  if (s.length === 0 || s.length > 45) return null;
  const tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (lastColon >= 0 && s.slice(lastColon + 1).includes('.')) {
    const v4 = parseIpv4(s.slice(lastColon + 1));
    if (v4 === null) return null;
    tail.push(v4 >>> 16, v4 & 0xffff);
    s = s.slice(0, lastColon + 1);
    if (!s.endsWith('::')) s = s.slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const group = /^[0-9a-fA-F]{1,4}$/;
  const parseSide = (side: string): number[] | null => {
    if (side === '') return [];
    const out: number[] = [];
    for (const g of side.split(':')) {
      if (!group.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parseSide(halves[0]);
  if (head === null) return null;
  if (halves.length === 1) {
    const groups = [...head, ...tail];
    return groups.length === 8 ? groups : null;
  }
  const rest = parseSide(halves[1]);
  if (rest === null) return null;
  const known = head.length + rest.length + tail.length;
  if (known > 7) return null;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail];
}

export function formatIpv6(groups: readonly number[]): string {
  return groups.map((g) => g.toString(16)).join(':');
}

/**
 * Cloud instance metadata and platform endpoints (AWS EC2, ECS and EKS; Azure wireserver; Alibaba;
 * Tencent; GCP uses 169.254.169.254). They hand out credentials, so they stay refused even when the
 * operator allows private addresses. Kept as text in canonical form (formatIpv4 / formatIpv6).
 */
export const METADATA_ADDRESSES: readonly string[] = [
  '169.254.169.254',
  '169.254.170.2',
  '169.254.170.23',
  '169.254.0.23',
  '168.63.129.16',
  '100.100.100.200',
  'fd00:ec2:0:0:0:0:0:254',
  'fd00:ec2:0:0:0:0:0:23',
];
const METADATA = new Set(METADATA_ADDRESSES);

function classifyV4(n: number, text: string): AddressVerdict {
  if (METADATA.has(text)) return { address: text, allowed: false, category: 'metadata' };
  for (const [base, prefix, category] of V4_BLOCKED) {
    if (inV4(n, base, prefix)) return { address: text, allowed: false, category };
  }
  return { address: text, allowed: true, category: 'public' };
}

function embedded(g: readonly number[], hi: number, text: string, outer: AddressCategory): AddressVerdict {
  const v4 = ((g[hi] << 16) | g[hi + 1]) >>> 0;
  const inner = classifyV4(v4, formatIpv4(v4));
  return {
    address: text,
    allowed: inner.allowed,
    category: inner.allowed ? outer : inner.category,
    embeddedIpv4: inner.address,
  };
}

function prefixMatch(g: readonly number[], want: readonly number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((g[i] & mask) !== (want[i] & mask)) return false;
  }
  return true;
}

function classifyV6(g: readonly number[]): AddressVerdict {
  const text = formatIpv6(g);
  const block = (category: AddressCategory): AddressVerdict => ({ address: text, allowed: false, category });
  if (METADATA.has(text)) return block('metadata');
  const zeros5 = g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0;
  if (zeros5 && g[5] === 0 && g[6] === 0 && g[7] === 0) return block('unspecified');
  if (zeros5 && g[5] === 0 && g[6] === 0 && g[7] === 1) return block('loopback');
  // ::ffff:a.b.c.d (IPv4-mapped): a dual-stack socket connects to the IPv4 address, which decides.
  if (zeros5 && g[5] === 0xffff) return embedded(g, 6, text, 'public');
  // ::a.b.c.d (deprecated IPv4-compatible) and ::ffff:0:a.b.c.d (SIIT): never a plain destination.
  if (
    (zeros5 && g[5] === 0) ||
    (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0xffff && g[5] === 0)
  ) {
    const inner = embedded(g, 6, text, 'reserved');
    return { ...inner, allowed: false };
  }
  // 64:ff9b::/96 well-known NAT64 prefix: the gateway would connect to the embedded IPv4 address.
  if (prefixMatch(g, [0x64, 0xff9b, 0, 0, 0, 0], 96)) return embedded(g, 6, text, 'public');
  if (prefixMatch(g, [0x64, 0xff9b, 1], 48)) return block('nat64_local');
  if (prefixMatch(g, [0x100, 0, 0, 0], 64)) return block('discard');
  if (prefixMatch(g, [0xfc00], 7)) return block('unique_local');
  if (prefixMatch(g, [0xfe80], 10)) return block('link_local');
  if (prefixMatch(g, [0xfec0], 10)) return block('site_local');
  if (prefixMatch(g, [0xff00], 8)) return block('multicast');
  // Everything outside global unicast 2000::/3 is unassigned or reserved.
  if (!prefixMatch(g, [0x2000], 3)) return block('reserved');
  if (prefixMatch(g, [0x2001, 0x0db8], 32)) return block('documentation');
  if (prefixMatch(g, [0x3fff, 0], 20)) return block('documentation');
  // 2001::/23: Teredo, benchmarking, ORCHID and other protocol assignments.
  if (prefixMatch(g, [0x2001, 0], 23)) return block('protocol_assignment');
  // 2002::/16 6to4: the IPv4 address in bits 16..47 decides.
  if (g[0] === 0x2002) return embedded(g, 1, text, 'public');
  if (g[0] === 0x5f00) return block('reserved');
  return { address: text, allowed: true, category: 'public' };
}

/** Classifies an IP address given as text. Non-IP text is 'invalid' and never allowed. */
export function classifyAddress(text: string): AddressVerdict {
  const t = text.trim().replace(/^\[(.*)\]$/, '$1');
  const v4 = parseIpv4(t);
  if (v4 !== null) return classifyV4(v4, formatIpv4(v4));
  if (t.includes(':')) {
    const g = parseIpv6(t);
    if (g !== null) return classifyV6(g);
  }
  return { address: t, allowed: false, category: 'invalid' };
}

/** A decision on one resolved address; the client's policy is {@link defaultAddressPolicy}. */
export type AddressPolicy = (address: string) => AddressVerdict;

/**
 * The one address policy. allowPrivate (operator setting LIPSYNC_ALLOW_PRIVATE_URLS) lets every
 * address through except text that is not an IP address and the cloud metadata endpoints.
 */
export function defaultAddressPolicy(allowPrivate: boolean): AddressPolicy {
  if (!allowPrivate) return classifyAddress;
  return (address) => {
    const v = classifyAddress(address);
    return v.category === 'invalid' || v.category === 'metadata' ? v : { ...v, allowed: true };
  };
}

/**
 * Ports that are never connected to, whatever the address: the WHATWG Fetch standard's "bad ports"
 * (mail, shells, IRC, X11, ...), which browsers refuse too, so that a URL cannot smuggle an HTTP
 * request into another protocol's server. Port 0 is not a destination either.
 */
const REFUSED_PORTS = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

export function isRefusedPort(port: number): boolean {
  return !Number.isInteger(port) || port < 0 || port > 65535 || REFUSED_PORTS.has(port);
}
