// Prisma CLI configuration (Prisma 6.19, Rust-free client and WASM schema engine).
// The JS engine never uses a native query-engine library; pointing the variable at /dev/null
// stops the CLI from trying to download one on a machine without outside network.
process.env.PRISMA_QUERY_ENGINE_LIBRARY ??= "/dev/null";

import path from "node:path";
import { PrismaPg } from "adapter-pg-7";
import { defineConfig } from "prisma/config";

const url = process.env.DATABASE_URL ?? "postgresql://127.0.0.1:5432/postgres";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join("prisma", "schema.prisma"),
  migrations: { path: path.join("prisma", "migrations") },
  async adapter() {
    return new PrismaPg({ connectionString: url });
  },
});
