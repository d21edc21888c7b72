/**
 * The ports launch.ts hands to the services of one launch: each service's own listener and, with
 * `metrics`, each identity and API process's METRICS_PORT with the address a scraper reaches it at.
 */

/** Where one service serves its metrics. */
export interface MetricsEndpoint {
  /** The service process ("identity-1", "api-2", ...). */
  name: string;
  /** `host:port` of its metrics listener (a Prometheus scrape target). */
  target: string;
  /** `http://host:port/metrics`. */
  url: string;
}

/**
 * Free ports for one launch, none handed out twice. A port `source` found is free only until
 * someone binds it, and the next call can return it again while the service it was meant for is
 * still starting. `reserved` ports (the fixed ones; 0 means none) are never handed out.
 */
export function distinctPorts(source: () => Promise<number>, reserved: number[] = []): () => Promise<number> {
  const handedOut = new Set(reserved.filter((p) => p > 0));
  return async () => {
    for (;;) {
      const candidate = await source();
      if (!handedOut.has(candidate)) {
        handedOut.add(candidate);
        return candidate;
      }
    }
  };
}

/** The address to reach a metrics listener bound to `host` (METRICS_HOST) from this machine. */
export function metricsHost(host: string | undefined): string {
  if (!host || host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

/** The metrics listeners of one launch: filled in as {@link MetricsPorts.envFor} hands out ports. */
export interface MetricsPorts {
  /** Every port handed out so far, in the order the services asked. */
  endpoints: MetricsEndpoint[];
  /** METRICS_PORT for the service `name` when metrics are asked for (none otherwise). */
  envFor(name: string): Promise<Record<string, string>>;
}

/**
 * METRICS_PORT assignment for one launch: with `enabled`, every service that asks gets a port of
 * its own from `nextPort`, reachable at `metricsHost(host)`; without it, none does.
 */
export function metricsPorts(enabled: boolean, nextPort: () => Promise<number>, host: string | undefined): MetricsPorts {
  const endpoints: MetricsEndpoint[] = [];
  return {
    endpoints,
    envFor: async (name: string): Promise<Record<string, string>> => {
      if (!enabled) return {};
      const metricsPort = await nextPort();
      const target = `${metricsHost(host)}:${metricsPort}`;
      endpoints.push({ name, target, url: `http://${target}/metrics` });
      return { METRICS_PORT: String(metricsPort) };
    },
  };
}
