import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/**
 * Address ranges an outbound request chosen by a user (an MCP authorization server's token URL, a
 * webhook endpoint) must never reach: this host, its link, private networks, carrier-grade NAT, documentation,
 * benchmarking, multicast and reserved space. IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is checked
 * against the IPv4 rules by BlockList itself; NAT64, 6to4 and Teredo forms are refused whole.
 */
const FORBIDDEN: Array<[string, number, "ipv4" | "ipv6"]> = [
  ["0.0.0.0", 8, "ipv4"],
  ["10.0.0.0", 8, "ipv4"],
  ["100.64.0.0", 10, "ipv4"],
  ["127.0.0.0", 8, "ipv4"],
  ["169.254.0.0", 16, "ipv4"],
  ["172.16.0.0", 12, "ipv4"],
  ["192.0.0.0", 24, "ipv4"],
  ["192.0.2.0", 24, "ipv4"],
  ["192.88.99.0", 24, "ipv4"],
  ["192.168.0.0", 16, "ipv4"],
  ["198.18.0.0", 15, "ipv4"],
  ["198.51.100.0", 24, "ipv4"],
  ["203.0.113.0", 24, "ipv4"],
  ["224.0.0.0", 4, "ipv4"],
  ["240.0.0.0", 4, "ipv4"],
  ["::", 128, "ipv6"],
  ["::1", 128, "ipv6"],
  ["::", 96, "ipv6"],
  ["64:ff9b::", 96, "ipv6"],
  ["64:ff9b:1::", 48, "ipv6"],
  ["100::", 64, "ipv6"],
  ["2001::", 32, "ipv6"],
  ["2001:db8::", 32, "ipv6"],
  ["2002::", 16, "ipv6"],
  ["fc00::", 7, "ipv6"],
  ["fe80::", 10, "ipv6"],
  ["fec0::", 10, "ipv6"],
  ["ff00::", 8, "ipv6"],
];

const blocked = new BlockList();
for (const [network, prefix, type] of FORBIDDEN) blocked.addSubnet(network, prefix, type);

/** This host: 127.0.0.0/8 and ::1 (IPv4-mapped forms are checked against the IPv4 rule by BlockList). */
const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** True when `address` (an IP literal) lies in a range outbound requests must not reach; non-IPs are refused too. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 0) return true;
  return blocked.check(bare, family === 4 ? "ipv4" : "ipv6");
}

/** True when `address` (an IP literal) is this host's loopback. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 0) return false;
  return loopback.check(bare, family === 4 ? "ipv4" : "ipv6");
}

const LOCALHOST = /(^|\.)localhost\.?$/i;

/** Why an outbound URL was refused (for the server log only; clients get one generic answer). */
export class OutboundUrlRefused extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "OutboundUrlRefused";
  }
}

/** An outbound target whose address was checked: connect to `address`, present `url.hostname`. */
export interface PinnedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. */
export type ResolveAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** Options of {@link OutboundUrlPolicy}. */
export interface OutboundUrlPolicyOptions {
  /**
   * Development and test only (`MCP_ALLOW_PRIVATE_URLS=true`): allow `http:` and private,
   * loopback and link-local addresses, so a local authorization server can be used.
   */
  allowPrivate: boolean;
  /**
   * Development only (`MCP_ALLOW_PRIVATE_ORIGINS`): origins (`http://127.0.0.1:3920`) that may be
   * `http:` and private or loopback, each exactly (scheme, host and port); every other URL keeps
   * the full policy. `MCP_SAMPLE=true pnpm start` names the sample MCP server's origin here.
   */
  allowPrivateOrigins?: readonly string[];
  /**
   * Outside production (webhook endpoints): allow `http:` and this host's loopback (127.0.0.0/8,
   * `::1`, `localhost`), so a receiver on the same machine can be used; every other private,
   * link-local or reserved address stays refused.
   */
  allowLoopback?: boolean;
  /** DNS resolution (default `dns.lookup` with `all: true`); tests inject one. */
  resolveAll?: ResolveAll;
}

const defaultResolveAll: ResolveAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * The policy for URLs the server itself requests on a user's behalf. `https:` only, no
 * credentials in the URL, and every address the host name resolves to must be public; the
 * request then connects to the checked address ({@link PinnedTarget}), so a second DNS answer
 * (rebinding) cannot redirect it.
 */
export class OutboundUrlPolicy {
  readonly #allowPrivate: boolean;
  readonly #privateOrigins: ReadonlySet<string>;
  readonly #allowLoopback: boolean;
  readonly #resolveAll: ResolveAll;

  constructor(options: OutboundUrlPolicyOptions) {
    this.#allowPrivate = options.allowPrivate;
    this.#privateOrigins = new Set((options.allowPrivateOrigins ?? []).map((origin) => new URL(origin).origin));
    this.#allowLoopback = options.allowLoopback ?? false;
    this.#resolveAll = options.resolveAll ?? defaultResolveAll;
  }

  /** True when `address` may be reached under this policy's flags (not counting named origins). */
  #reachable(address: string): boolean {
    return this.#allowPrivate || !isForbiddenAddress(address) || (this.#allowLoopback && isLoopbackAddress(address));
  }

  /** The checks that need no DNS (used when settings are saved): the reason for refusal, or undefined. */
  problem(raw: string): string | undefined {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return "is not a valid URL";
    }
    if (url.username || url.password) return "must not contain credentials";
    if (this.#privateOrigins.has(url.origin)) return undefined;
    const http = this.#allowPrivate || this.#allowLoopback;
    const allowed = http ? ["https:", "http:"] : ["https:"];
    if (!allowed.includes(url.protocol)) return http ? "must be an http(s) URL" : "must be an https URL";
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) !== 0 && !this.#reachable(host)) return "must not point to a private, loopback or link-local address";
    if (!this.#allowPrivate && !this.#allowLoopback && LOCALHOST.test(host)) return "must not point to localhost";
    return undefined;
  }

  /** Full check: {@link problem}, then DNS; every address must be allowed. Throws {@link OutboundUrlRefused}. */
  async resolve(raw: string): Promise<PinnedTarget> {
    const problem = this.problem(raw);
    if (problem) throw new OutboundUrlRefused(`URL ${problem}`);
    const url = new URL(raw);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    let addresses: Array<{ address: string; family: number }>;
    if (isIP(host) !== 0) {
      addresses = [{ address: host, family: isIP(host) }];
    } else {
      try {
        addresses = await this.#resolveAll(host);
      } catch (error) {
        throw new OutboundUrlRefused(`host name does not resolve: ${(error as Error).message}`);
      }
    }
    const first = addresses[0];
    if (!first) throw new OutboundUrlRefused("host name has no address");
    if (!this.#privateOrigins.has(url.origin)) {
      const bad = addresses.find((a) => !this.#reachable(a.address));
      if (bad) throw new OutboundUrlRefused(`host resolves to a forbidden address (${bad.address})`);
    }
    return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
  }
}
