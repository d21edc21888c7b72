// Placeholder for `vite dev`: the web server (dist/server/serve.js) answers /config.js itself
// with the service base URL it was started with.
window.__CONFIG__ = window.__CONFIG__ || {};
