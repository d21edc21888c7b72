import { AppError } from "@app/http-kit";

/**
 * Resolves a `callbackURL`/`redirectTo` against the base URL and accepts it only when it lands on
 * the base URL's origin or a trusted origin (CORS_ORIGINS), so a mailed link can never send the
 * browser, with a token in its query, to another site (an open redirect). 403 `forbidden` else.
 */
export function trustedCallback(
  raw: string | undefined,
  fallback: string,
  settings: { baseUrl: string; trustedOrigins: readonly string[] },
): string {
  const value = raw ?? fallback;
  let url: URL;
  try {
    url = new URL(value, settings.baseUrl);
  } catch {
    throw new AppError("forbidden", "callbackURL is not a valid URL");
  }
  const origins = new Set([new URL(settings.baseUrl).origin, ...settings.trustedOrigins]);
  if ((url.protocol !== "http:" && url.protocol !== "https:") || !origins.has(url.origin)) {
    throw new AppError("forbidden", "callbackURL must be on this site or a trusted origin");
  }
  return url.href;
}

/** `url` with `params` set in its query. */
export function withQuery(url: string, params: Record<string, string>): string {
  const out = new URL(url);
  for (const [k, v] of Object.entries(params)) out.searchParams.set(k, v);
  return out.href;
}
