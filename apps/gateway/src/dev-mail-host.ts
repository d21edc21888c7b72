/** Host names that only ever reach this machine: a browser never resolves them through DNS. */
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The host name of a Host header value (port dropped, lower case), or undefined when it is not one. */
function hostName(host: string | undefined): string | undefined {
  if (!host || /[\s/?#@\\]/.test(host)) return undefined;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * True when a request for `/dev/mail` may be answered: its Host is the public base URL's host
 * (`BASE_URL`) or a loopback name. A DNS-rebinding page (a foreign name that resolves to this
 * machine after the page has loaded) sends its own name as Host, so it cannot read the reset and
 * verification links of the development mailbox (tools/stack/src/dev-mail.ts).
 */
export function devMailHostAllowed(host: string | undefined, baseUrl: string | undefined): boolean {
  const name = hostName(host);
  if (name === undefined) return false;
  if (LOOPBACK_NAMES.has(name)) return true;
  return baseUrl !== undefined && hostName(new URL(baseUrl).host) === name;
}
