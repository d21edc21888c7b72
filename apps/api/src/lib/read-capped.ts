/** Largest JSON answer read from another service (identity's get-session, an OAuth token endpoint). */
export const MAX_UPSTREAM_JSON_BYTES = 64 * 1024;

/**
 * Reads a fetch response body as JSON, but no more than `maxBytes`: a larger body is cancelled
 * and, like a body that is not JSON, yields undefined. An upstream (possibly hostile: an MCP
 * authorization server is chosen by the user) cannot make this process buffer an unbounded body.
 */
export async function readJsonCapped(response: Response, maxBytes = MAX_UPSTREAM_JSON_BYTES): Promise<unknown> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
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
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}
