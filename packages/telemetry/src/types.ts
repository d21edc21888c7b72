/** Strips secrets from a URL, a path or a path with its query (http-kit's `redactUrl`). */
export type UrlRedactor = (url: string) => string | undefined;

/** Options of `startTracing` (index.ts). */
export interface TracingOptions {
  /**
   * `service.name` of every span this process exports (identity, api, gateway), unless
   * `OTEL_SERVICE_NAME` or `service.name` in `OTEL_RESOURCE_ATTRIBUTES` says otherwise.
   */
  serviceName: string;
  /**
   * Loads the function that strips secrets from the URLs spans record (the access log's, so both
   * hide the same tokens). Called once the instrumentations are registered, so whatever it
   * imports is instrumented too; startTracing resolves once it has loaded.
   */
  loadUrlRedactor: () => Promise<UrlRedactor>;
}
