import net from "node:net";

/** Counters of one {@link PgCountingProxy}. */
export interface PgCounts {
  /** Round trips: simple `Query` messages plus extended-protocol `Sync` messages. */
  roundTrips: number;
  /** Statements executed (`Query` + `Execute`). */
  statements: number;
  /** Client connections opened through the proxy. */
  connections: number;
}

/**
 * A transparent TCP proxy in front of PostgreSQL that parses the frontend (client → server)
 * protocol and counts database round trips: every simple `Query` ('Q') and every extended-protocol
 * `Sync` ('S', which ends a Parse/Bind/Execute pipeline) is one round trip. Bytes are forwarded
 * untouched in both directions; nothing is buffered beyond one message header.
 */
export class PgCountingProxy {
  readonly #server: net.Server;
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<net.Socket>();
  readonly counts: PgCounts = { roundTrips: 0, statements: 0, connections: 0 };
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
    this.#server = net.createServer((client) => this.#accept(client));
  }

  /** Starts listening on 127.0.0.1 (free port). */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(0, "127.0.0.1", () => resolve());
    });
    const address = this.#server.address();
    this.port = typeof address === "object" && address ? address.port : 0;
    return this.port;
  }

  /** A copy of the counters (take one before and after a measurement). */
  snapshot(): PgCounts {
    return { ...this.counts };
  }

  /** Rewrites a connection string to go through this proxy. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = "127.0.0.1";
    url.port = String(this.port);
    return url.toString();
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: net.Socket): void {
    this.counts.connections += 1;
    const upstream = net.connect(this.#target.port, this.#target.host);
    this.#sockets.add(client);
    this.#sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const done = () => {
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on("error", done);
    upstream.on("error", done);
    client.on("close", done);
    upstream.on("close", done);
    upstream.pipe(client);
    const parser = frontendParser((type) => {
      if (type === 0x51) {
        this.counts.roundTrips += 1;
        this.counts.statements += 1;
      } else if (type === 0x53) {
        this.counts.roundTrips += 1;
      } else if (type === 0x45) {
        this.counts.statements += 1;
      }
    });
    client.on("data", (chunk: Buffer) => {
      parser(chunk);
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once("drain", () => client.resume());
      }
    });
  }
}

/**
 * An incremental parser of the PostgreSQL frontend stream. Untyped messages (the startup packet,
 * SSLRequest, CancelRequest: int32 length first) come first; typed messages (1 byte type + int32
 * length including itself) follow. Calls `onType` once per typed message.
 */
export function frontendParser(onType: (type: number) => void): (chunk: Buffer) => void {
  let startupDone = false;
  let header = Buffer.alloc(0);
  let skip = 0;
  return (chunk) => {
    let offset = 0;
    while (offset < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - offset);
        skip -= n;
        offset += n;
        continue;
      }
      const need = startupDone ? 5 : 8;
      const take = Math.min(need - header.length, chunk.length - offset);
      header = Buffer.concat([header, chunk.subarray(offset, offset + take)]);
      offset += take;
      if (header.length < need) return;
      if (!startupDone) {
        const length = header.readInt32BE(0);
        const code = header.readInt32BE(4);
        // SSLRequest / GSSENCRequest are followed by another untyped packet; the startup packet is last.
        if (code !== 80877103 && code !== 80877104 && code !== 80877102) startupDone = true;
        skip = length - 8;
      } else {
        const type = header[0] as number;
        onType(type);
        skip = header.readInt32BE(1) - 4;
      }
      header = Buffer.alloc(0);
    }
  };
}
