import { randomBytes } from "node:crypto";

let lastMs = 0;
let seq = 0;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then a 12-bit sequence and random bits. Ids made
 * by one process are strictly increasing, so ordering rows by id is creation order, which makes
 * id-based keyset pagination stable.
 */
export function newId(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    seq = randomBytes(2).readUInt16BE(0) & 0x3ff;
  } else {
    seq += 1;
    if (seq > 0xfff) {
      lastMs += 1;
      seq = 0;
    }
  }
  const bytes = randomBytes(16);
  const ms = lastMs;
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | ((seq >> 8) & 0x0f);
  bytes[7] = seq & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
