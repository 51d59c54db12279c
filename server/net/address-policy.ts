import net from 'node:net';

/**
 * Which addresses and URLs Folio may call on a customer's behalf (webhook
 * endpoints; import by URL). Public HTTPS only: an address that is private,
 * loopback, link-local, CGNAT, multicast, reserved, documentation or a cloud
 * metadata service is refused in every spelling a URL parser, a resolver or
 * an IPv6 translation can give it.
 */

/** The test suite's receiver runs on loopback with a self-signed certificate; nothing else is unlocked. */
export type AddressPolicy = { allowLoopback: boolean };

const PUBLIC_ONLY: AddressPolicy = { allowLoopback: false };

// IANA special-purpose IPv4 registry (RFC 6890 and successors), minus the few
// globally reachable anycast blocks no customer server lives in anyway.
const FORBIDDEN_V4: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
  // Azure's platform endpoint (wireserver, instance metadata relay) sits on a public-looking address.
  ['168.63.129.16', 32, 'cloud metadata'],
];

// Inside global unicast (2000::/3), the blocks that are not a customer's server.
const FORBIDDEN_V6_GLOBAL: Array<[string, number, string]> = [
  ['2001::', 23, 'IETF protocol assignments (Teredo, benchmarking, ORCHID)'],
  ['2001:db8::', 32, 'documentation'],
  ['2002::', 16, '6to4'],
  ['3fff::', 20, 'documentation'],
];

function blockList(entries: Array<[string, number, string]>, family: 'ipv4' | 'ipv6') {
  return entries.map(([network, prefix, reason]) => {
    const list = new net.BlockList();
    list.addSubnet(network, prefix, family);
    return { list, reason };
  });
}

const v4Rules = blockList(FORBIDDEN_V4, 'ipv4');
const v6GlobalRules = blockList(FORBIDDEN_V6_GLOBAL, 'ipv6');
const globalUnicast = new net.BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');
const loopbackV4 = new net.BlockList();
loopbackV4.addSubnet('127.0.0.0', 8, 'ipv4');

/** The 16 bytes of an IPv6 address (`::` expanded, a trailing dotted quad read), or undefined. */
function ipv6Bytes(address: string): number[] | undefined {
  if (net.isIPv6(address) === false) return undefined;
  let text = address;
  const tail: number[] = [];
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    tail.push(...quad[1]!.split('.').map(Number));
    text = `${text.slice(0, -quad[1]!.length)}0:0`;
  }
  const [head = '', rest] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const groups = rest === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  if (groups.length !== 8) return undefined;
  const bytes = groups.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** The IPv4 address an IPv6 address carries when a translator would deliver to it (mapped, compatible, NAT64). */
function embeddedIpv4(bytes: number[]): string | undefined {
  const startsWith = (values: number[]) => values.every((value, index) => bytes[index] === value);
  const last4 = bytes.slice(12).join('.');
  if (startsWith([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])) return last4; // ::ffff:a.b.c.d
  if (startsWith([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return last4; // 64:ff9b::a.b.c.d (NAT64 well-known prefix)
  return undefined;
}

/**
 * Why this IP address may not be called, or undefined when it is a public
 * unicast address. Anything that is not a well-formed address is refused.
 */
export function forbiddenAddressReason(address: string, policy: AddressPolicy = PUBLIC_ONLY): string | undefined {
  // A zone id (fe80::1%eth0) only exists on link-local addresses.
  if (address.includes('%')) return 'link-local (scoped)';
  const family = net.isIP(address);
  if (family === 4) {
    if (policy.allowLoopback && loopbackV4.check(address, 'ipv4')) return undefined;
    return v4Rules.find((rule) => rule.list.check(address, 'ipv4'))?.reason;
  }
  if (family === 6) {
    const bytes = ipv6Bytes(address);
    if (!bytes) return 'not an IP address';
    const v4 = embeddedIpv4(bytes);
    if (v4) return forbiddenAddressReason(v4, policy);
    if (policy.allowLoopback && bytes.slice(0, 15).every((byte) => byte === 0) && bytes[15] === 1) return undefined;
    if (!globalUnicast.check(address, 'ipv6')) return 'not global unicast IPv6 (loopback, unspecified, link-local, unique-local, multicast or reserved)';
    return v6GlobalRules.find((rule) => rule.list.check(address, 'ipv6'))?.reason;
  }
  return 'not an IP address';
}

// Names that resolve inside a network, never on the public internet.
const INTERNAL_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa', 'arpa', 'invalid', 'onion', 'lan', 'intranet'];

export type CheckedUrl = {
  url: URL;
  /** The host to resolve or connect to: lower case, no brackets, no trailing dot. */
  host: string;
  /** Set when the URL names an IP address instead of a host name. */
  literalAddress?: string;
  port: number;
};

export type UrlCheck = { ok: true; value: CheckedUrl } | { ok: false; reason: string };

/**
 * Parses and vets a URL without touching the network: HTTPS, no user-info,
 * a host name that could be public, or an IP literal that is public.
 * The WHATWG parser turns decimal, octal, hex, short and full-width IPv4
 * spellings into dotted quads first, so each is checked as the address it is.
 */
export function checkPublicHttpsUrl(input: string, policy: AddressPolicy = PUBLIC_ONLY): UrlCheck {
  if (typeof input !== 'string' || input.length === 0 || input.length > 2048) return { ok: false, reason: 'the URL must be 1 to 2048 characters' };
  // Parsers disagree about backslashes, whitespace and control characters; a URL
  // that needs them is one we and the receiver might read differently.
  if (/[\\\s\u0000-\u001f\u007f]/.test(input)) return { ok: false, reason: 'the URL contains whitespace, control characters or backslashes' };
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'only https URLs are accepted' };
  if (url.username || url.password || /^https:\/\/[^/?#]*@/i.test(input)) return { ok: false, reason: 'URLs with user info are not accepted' };
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  host = host.replace(/\.$/, '');
  if (!host) return { ok: false, reason: 'the URL has no host' };
  const port = url.port ? Number(url.port) : 443;
  if (net.isIP(host)) {
    const reason = forbiddenAddressReason(host, policy);
    return reason ? { ok: false, reason: `${host} is not a public address (${reason})` } : { ok: true, value: { url, host, literalAddress: host, port } };
  }
  if (!host.includes('.')) return { ok: false, reason: `${host} is not a public host name` };
  const internal = INTERNAL_SUFFIXES.find((suffix) => host === suffix || host.endsWith(`.${suffix}`));
  if (internal) return { ok: false, reason: `${host} is an internal host name (.${internal})` };
  // A last label of digits only is not a domain name; the parser would have read it as IPv4 if it were one.
  if (/^\d+$/.test(host.split('.').at(-1)!)) return { ok: false, reason: `${host} is not a valid host name` };
  return { ok: true, value: { url, host, port } };
}
