-- CreateTable
CREATE TABLE "auth_event" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "user_id" TEXT,
    "actor_id" TEXT,
    "ip" TEXT,
    "user_agent" TEXT,
    "outcome" TEXT NOT NULL,
    "method" TEXT,
    "detail" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "auth_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_endpoint" (
    "id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "secret_sealed" TEXT NOT NULL,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoint_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_message" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatched_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_delivery" (
    "id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status" INTEGER,
    "last_error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_delivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "auth_event_user_id_created_at_id_idx" ON "auth_event"("user_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "auth_event_created_at_id_idx" ON "auth_event"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "auth_event_type_created_at_idx" ON "auth_event"("type", "created_at" DESC);

-- CreateIndex
CREATE INDEX "webhook_endpoint_created_at_idx" ON "webhook_endpoint"("created_at");

-- CreateIndex
CREATE INDEX "webhook_message_dispatched_at_created_at_idx" ON "webhook_message"("dispatched_at", "created_at");

-- CreateIndex
CREATE INDEX "webhook_delivery_endpoint_id_created_at_idx" ON "webhook_delivery"("endpoint_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "webhook_delivery_message_id_idx" ON "webhook_delivery"("message_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_delivery_endpoint_id_message_id_key" ON "webhook_delivery"("endpoint_id", "message_id");

-- AddForeignKey
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "webhook_message"("id") ON DELETE CASCADE ON UPDATE CASCADE;


ALTER TABLE "auth_event" OWNER TO auth_identity;
ALTER TABLE "webhook_endpoint" OWNER TO auth_identity;
ALTER TABLE "webhook_message" OWNER TO auth_identity;
ALTER TABLE "webhook_delivery" OWNER TO auth_identity;

-- pg-boss keeps the webhook delivery queue in a schema of its own; identity's role owns it so
-- pg-boss can create and migrate its tables there.
CREATE SCHEMA IF NOT EXISTS "pgboss";
ALTER SCHEMA "pgboss" OWNER TO auth_identity;
