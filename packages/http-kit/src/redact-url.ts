/** Query parameters whose values never reach a log line. */
const SECRET_NAMES = new Set([
  "token",
  "access_token",
  "refresh_token",
  "id_token",
  "code",
  "code_verifier",
  "state",
  "password",
  "secret",
]);

/**
 * Path segments followed by a secret: identity's mailed reset link is
 * `GET /api/auth/reset-password/:token` (apps/identity/src/routes/mailed-links.ts). Every
 * segment after one of these is redacted.
 */
const SECRET_PATH_PARENTS = new Set(["reset-password"]);

const REDACTED = "[REDACTED]";

/** Any {@link SECRET_PATH_PARENTS} name, in any letter case, anywhere in a path. */
const PARENT_IN_PATH = new RegExp([...SECRET_PATH_PARENTS].map((name) => name.replace(/[-]/g, "\\-")).join("|"), "i");
/** The parents as an array, for the per-segment prefix check. */
const PARENTS = [...SECRET_PATH_PARENTS];

/** A URL component decoded for comparison (as it is when it cannot be decoded), lower case. */
function comparable(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll("+", " ")).trim().toLowerCase();
  } catch {
    return raw.trim().toLowerCase();
  }
}

/**
 * Redacts the segments after a secret-bearing one. Express matches routes case-insensitively
 * and ignores a trailing slash, so `/API/AUTH/Reset-Password/<token>/` reaches the route too and
 * is compared decoded and in lower case; a segment that decodes to `reset-password/<token>`
 * (an encoded slash) is redacted whole.
 */
function redactPath(path: string): string {
  // Without a percent sign a segment decodes to itself (`+` to a space, which trim then drops),
  // so a path that does not contain a parent's name in any case has nothing to redact: the
  // usual request costs one lower-case copy instead of a decode per segment.
  if (!path.includes("%") && !PARENT_IN_PATH.test(path)) return path;
  const segments = path.split("/");
  let secret = false;
  for (let i = 0; i < segments.length; i += 1) {
    const raw = segments[i] ?? "";
    if (secret) {
      if (raw.length > 0) segments[i] = REDACTED;
      continue;
    }
    const name = comparable(raw);
    if (SECRET_PATH_PARENTS.has(name)) secret = true;
    else if (PARENTS.some((parent) => name.startsWith(`${parent}/`))) segments[i] = REDACTED;
  }
  return segments.join("/");
}

/**
 * Strips secrets from a URL before it is logged: secret-bearing query parameters (the WebSocket
 * `token`, OAuth codes) and secret path segments (a reset token).
 */
export function redactUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const q = url.indexOf("?");
  const path = redactPath(q < 0 ? url : url.slice(0, q));
  if (q < 0) return path;
  const hash = url.indexOf("#", q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  // Names are compared decoded, so `%74oken=` or `TOKEN=` is redacted like `token=`.
  const parts = query.split("&").map((part) => {
    const eq = part.indexOf("=");
    const rawName = eq < 0 ? part : part.slice(0, eq);
    return SECRET_NAMES.has(comparable(rawName)) ? `${rawName}=${REDACTED}` : part;
  });
  return `${path}?${parts.join("&")}`;
}
