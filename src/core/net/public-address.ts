import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';

/**
 * Where the platform may send requests to URLs its tenants give it (a Slack webhook of an alert rule): public
 * internet addresses only. A tenant must not be able to make the server call loopback, private-network, link-local
 * (cloud metadata at 169.254.169.254) or other special-purpose addresses on its behalf (SSRF). Operators' own
 * endpoints (SMTP, moderation, S3) are configuration, not tenant input, and are not restricted.
 */
const SPECIAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) SPECIAL.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  // ::/96 holds :: and ::1 and the deprecated IPv4-compatible addresses (::a.b.c.d, ::7f00:1): never public.
  // ::ffff:0:0:0/96 is IPv4-translated (::ffff:0:a.b.c.d). IPv4-mapped ones (::ffff:a.b.c.d, ::ffff:7f00:1) are
  // checked by BlockList against the IPv4 rules above.
  ['::', 96], ['::ffff:0:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) SPECIAL.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address (v4 or v6 text) is a public unicast address; false for anything else, names included. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !SPECIAL.check(address, 'ipv4');
  if (family !== 6) return false;
  return !SPECIAL.check(address, 'ipv6');
}

/** Host names that name this machine or a local network by convention, whatever a resolver says. */
const LOCAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)\.?$/i;

/**
 * Why a URL given by a tenant may not be called, or null when it may: checked when the URL is saved, so the tenant
 * hears about it at once. Names are checked again when they are resolved (publicOnlyLookup), since a name's
 * addresses can change after the check.
 */
export function privateUrlProblem(url: string): string | null {
  let host: string;
  try { host = new URL(url).hostname; } catch { return 'is not a valid URL'; }
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare)) return isPublicAddress(bare) ? null : `points at a non-public address (${bare})`;
  if (LOCAL_NAME.test(bare) || !bare.includes('.')) return `names a local host (${bare})`;
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Lookup = (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => void;

/**
 * A `dns.lookup`-compatible function for http(s).request's `lookup` option that fails when the name resolves to
 * any non-public address. The connection then goes to the address checked here, so a name that changes its answer
 * between the check and the connection (DNS rebinding) cannot slip through. `resolve` is for tests.
 */
export function publicOnlyLookup(resolve: Lookup = dnsLookup as unknown as Lookup): Lookup {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => !isPublicAddress(a.address));
      if (refused || list.length === 0) {
        const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to a non-public address (${refused?.address ?? 'none'}); refused`);
        e.code = 'EADDRNOTPUBLIC';
        return callback(e, []);
      }
      if ((options as LookupAllOptions).all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
