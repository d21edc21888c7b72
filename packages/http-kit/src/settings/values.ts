import { z } from "zod";

/** Value types shared by the settings fragments and the services' own variables. */

/** A comma-separated list variable, trimmed, empty entries dropped. */
export const commaList = z
  .string()
  .optional()
  .transform((s) =>
    (s ?? "")
      .split(",")
      .map((v) => v.trim())
      .filter(Boolean),
  );

/** A TCP port variable. */
export const portSchema = z.coerce.number().int().min(0).max(65535);

/** A comma-separated list of exact origins (`scheme://host[:port]`), normalised; `*` is refused. */
export const originList = commaList.pipe(
  z.array(
    z.string().transform((value, ctx) => {
      try {
        const url = new URL(value);
        if (url.origin === "null" || !/^https?:$/.test(url.protocol)) throw new Error("not http(s)");
        return url.origin;
      } catch {
        ctx.addIssue({ code: "custom", message: `"${value}" is not an origin like https://app.example.com` });
        return z.NEVER;
      }
    }),
  ),
);

/**
 * Express's `trust proxy`: "true"/"false", a hop count, or a list of names/CIDRs
 * (loopback, uniquelocal, 10.0.0.0/8...). Default: loopback only.
 */
export const trustProxySchema = z
  .string()
  .default("loopback")
  .transform((value): boolean | number | string => {
    if (value === "true") return true;
    if (value === "false") return false;
    if (/^\d+$/.test(value)) return Number(value);
    return value;
  });

/** A `true`/`false` flag, kept as the string the services compare. */
export const flag = z.enum(["true", "false"]);
