/**
 * Import boundaries, checked by `pnpm lint` (rules and their reasons: tools/lint-rules/boundaries.cjs;
 * proof that each rule fires: tools/lint-rules/src/boundaries.test.ts).
 */
const { configFor } = require("./tools/lint-rules/boundaries.cjs");

const config = configFor(__dirname);
config.options.webpackConfig = { fileName: "tools/lint-rules/resolve.cjs" };
module.exports = config;
