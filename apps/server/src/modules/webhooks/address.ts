/**
 * Where webhooks may go. A webhook URL is typed by a user, so without a guard it would make the server
 * reach what only the server can reach (its own admin ports, a cloud metadata service, the database): a
 * server-side request forgery. Every address a host name resolves to must be a public unicast one, and
 * the connection is made to the address that was checked (the check runs in the socket's own lookup, so
 * a DNS answer that changes between check and connect — DNS rebinding — cannot slip through).
 * WEBHOOK_ALLOW_PRIVATE=on lifts the guard (tests, and receivers on a private network by choice).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** ipaddr.js ranges a webhook may reach: only ordinary public addresses. */
const PUBLIC_RANGES = new Set(['unicast']);

/** Global unicast IPv6 (2000::/3): every public IPv6 address lies in it. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process(): an IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it is.
  const parsed = ipaddr.process(address);
  if (!PUBLIC_RANGES.has(parsed.range())) return false;
  // ipaddr.js calls what it has no name for unicast, such as the IPv4-compatible ::127.0.0.1 (::7f00:1)
  // and ::a9fe:a9fe (169.254.169.254), which reach the IPv4 address on some hosts: an IPv6 address must
  // be global unicast.
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

export class BlockedAddressError extends Error {
  readonly code = 'EWEBHOOKBLOCKED';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`${host} resolves to ${address}, which is not a public address`);
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http(s).request that refuses non-public addresses (unless `allowPrivate`): every
 * address the name resolves to must be public, so a name that answers with one public and one private
 * address is refused as a whole.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, options.all ? [] : '', undefined);
      const blocked = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (blocked) return callback(new BlockedAddressError(hostname, blocked.address), options.all ? [] : '');
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}

/** What registering `url` meets: fine, a bad URL, a host that does not resolve, or a private address. */
export async function checkWebhookUrl(
  url: string,
  allowPrivate: boolean,
): Promise<'ok' | 'badUrl' | 'unresolvable' | 'privateAddress'> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'badUrl';
  }
  // Plain http only where the guard is lifted (a local receiver in tests): a signature proves who sent
  // an event, not that nobody read it on the way.
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol) || !parsed.hostname || parsed.username || parsed.password)
    return 'badUrl';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) return allowPrivate || isPublicAddress(host) ? 'ok' : 'privateAddress';
  const addresses = await new Promise<LookupAddress[] | null>((resolve) =>
    dnsLookup(host, { all: true }, (error, found) => resolve(error ? null : found)),
  );
  if (!addresses || addresses.length === 0) return 'unresolvable';
  if (!allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) return 'privateAddress';
  return 'ok';
}
