// The webhook endpoints' wire (apps/identity/src/webhooks/): /api/auth/admin/webhooks.
// Filled in by the webhooks' work.
export {};
