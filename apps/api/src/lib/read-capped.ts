/** Largest JSON answer read from another service (identity's get-session, an OAuth token endpoint). */
export const MAX_UPSTREAM_JSON_BYTES = 64 * 1024;

/**
 * Reads a fetch response body as text, but no more than `maxBytes`: a larger body (declared or
 * streamed) is cancelled and yields undefined, as does a body that fails mid-way. No body is "".
 * An upstream (possibly hostile) cannot make this process buffer an unbounded body.
 */
export async function readTextCapped(response: Response, maxBytes = MAX_UPSTREAM_JSON_BYTES): Promise<string | undefined> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return undefined;
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks).toString("utf8");
  } catch {
    return undefined;
  }
}

/**
 * Reads a fetch response body as JSON within `maxBytes` (see {@link readTextCapped}); a body
 * that is too large, empty or not JSON yields undefined.
 */
export async function readJsonCapped(response: Response, maxBytes = MAX_UPSTREAM_JSON_BYTES): Promise<unknown> {
  const text = await readTextCapped(response, maxBytes);
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
