-- +goose Up
-- Manager figures read a tenant's transitions by time.
CREATE INDEX operation_events_tenant_at ON operation_events (tenant_id, at);

-- +goose Down
DROP INDEX operation_events_tenant_at;
