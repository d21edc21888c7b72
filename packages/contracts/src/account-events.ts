// The security event log's wire (apps/identity/src/security-events/): GET /api/auth/account-events
// and GET /api/auth/admin/events. Filled in by the event log's work.
export {};
