-- AlterTable
ALTER TABLE "mcp_server" ADD COLUMN     "issuer" TEXT;

-- AlterTable
ALTER TABLE "mcp_oauth_state" ADD COLUMN     "nonce_hash" TEXT;

