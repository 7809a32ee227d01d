/**
 * The network a client address belongs to, for remembering where a user signs in from (ADR 0008): an
 * IPv4 /24 or an IPv6 /64. A home or office address changes within its provider's block more often than
 * it leaves it, and a /64 is what one IPv6 subscriber gets, so one address per network would forget the
 * owner at every reconnection. ipaddr.js (Fastify's own address parser) reads every IPv6 notation and
 * unwraps IPv4-mapped addresses (`::ffff:192.0.2.1`), so one machine has one network.
 */
import ipaddr from 'ipaddr.js';
import { sha256Hex } from './secrets';

export function networkOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') {
    const [a, b, c] = (ip as ipaddr.IPv4).octets;
    return `${a}.${b}.${c}.0/24`;
  }
  const parts = (ip as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

/**
 * What is stored of a network: its SHA-256 with the user id. It keeps a table dump from listing who
 * signs in from where at a glance; it is not secret (a /24 is quickly enumerated), and it needs none:
 * sessions and the audit log hold the addresses themselves.
 */
export function networkHash(userId: number, address: string): string {
  return sha256Hex(`${userId}|${networkOf(address)}`);
}
