export { type CheckResult, type CheckStatus, formatReport, formatResult, GROUPS } from "./checks.js";
export { databaseChecks, JWKS_SEAL_PURPOSE } from "./db-checks.js";
export { type DoctorOptions, runDoctor } from "./doctor.js";
export { type ParsedArgs, parseArgs } from "./options.js";
