-- MCP servers connect from their URL alone: discovered authorization server metadata, the
-- RFC 8707 resource, the dynamic client registration (sealed) and the connection status.
ALTER TABLE "mcp_server"
  ADD COLUMN "status" TEXT NOT NULL DEFAULT 'not_connected',
  ADD COLUMN "auth_server_url" TEXT,
  ADD COLUMN "auth_server_metadata" JSONB,
  ADD COLUMN "resource" TEXT,
  ADD COLUMN "registered_client" TEXT;

UPDATE "mcp_server" SET "status" = 'connected' WHERE "access_token" IS NOT NULL;
