/**
 * Which addresses web_fetch may connect to. A model that can make the daemon fetch any URL could
 * otherwise read services that trust "local" callers (a dev server, a router, a cloud metadata
 * endpoint), so loopback, private, link-local and other special ranges are refused unless the user
 * allowed them in config.json. The check runs on the resolved addresses at connect time, through
 * the socket's own lookup, so a name that resolves differently later (DNS rebinding) is caught too.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

const special = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  special.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96],
] as const)
  special.addSubnet(net, bits, "ipv6");

/** Loopback, private, link-local, shared, multicast or reserved (IPv4-mapped IPv6 counts as its IPv4). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return special.check(address, family === 4 ? "ipv4" : "ipv6");
}

export class PrivateAddressError extends Error {
  readonly code = "EPRIVATEADDRESS";
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(
      `${host} resolves to ${address}, a loopback or private-network address; web_fetch does not reach those unless config.json has "webFetch": {"allowPrivateNetwork": true}`,
    );
    this.name = "PrivateAddressError";
  }
}

/** A URL's host written as an address (`127.0.0.1`, `[::1]`) never goes through a lookup: check it directly. */
export function checkLiteralHost(hostname: string, allowPrivate: boolean): void {
  const bare = hostname.replace(/^\[|\]$/g, "");
  if (!allowPrivate && isIP(bare) && isPrivateAddress(bare)) throw new PrivateAddressError(hostname, bare);
}

/** A socket lookup that refuses a name when any of its addresses is special (unless allowed). */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      const bad = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (bad) return callback(new PrivateAddressError(hostname, bad.address), "", 0);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}
