/**
 * Resolve options for dependency-cruiser, in the webpack shape its `webpackConfig` option reads
 * (no webpack involved): the `@app/*` entry points as aliases to their TypeScript source.
 */
const path = require("node:path");
const { aliasesFor } = require("./boundaries.cjs");

module.exports = { resolve: { alias: aliasesFor(path.resolve(__dirname, "..", "..")) } };
