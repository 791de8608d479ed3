-- +goose Up
-- See the PostgreSQL migration. Times are INTEGER microseconds (UTC).
ALTER TABLE escalation_outbox ADD COLUMN gave_up_at INTEGER;
CREATE INDEX escalation_outbox_gave_up ON escalation_outbox (tenant_id, gave_up_at)
    WHERE gave_up_at IS NOT NULL;

-- +goose Down
DROP INDEX escalation_outbox_gave_up;
ALTER TABLE escalation_outbox DROP COLUMN gave_up_at;
