import { defineConfig } from "vite";

// The web app: plain TypeScript and DOM, built to dist/public and served on its own origin
// (dist/server/serve.js, default http://localhost:5173). The service base URL is
// VITE_API_BASE_URL at build time, overridden at run time by the /config.js the server writes.
export default defineConfig({
  build: { outDir: "dist/public", emptyOutDir: true, target: "es2022", sourcemap: true },
  server: { port: 5173, strictPort: true },
  preview: { port: 5173, strictPort: true },
});
