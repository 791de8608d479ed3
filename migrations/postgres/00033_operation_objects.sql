-- +goose Up
-- Every object id settle has seen for an operation, so that support finds
-- the operation by whichever one a customer quotes (the second charge of a
-- duplicate, say): the confirmed reference, the ids a lookup or a webhook
-- named (the event log's evidence remote_id and remote_ids), an audit
-- finding's ids and a quarantined event linked to the operation. Filled by
-- triggers, so that every writer (sender, reconciler, auditor, reviewer) is
-- covered without one of them forgetting; rows leave with their operation.
CREATE TABLE operation_objects (
    tenant_id    text NOT NULL,
    object_id    text NOT NULL,
    operation_id uuid NOT NULL,
    PRIMARY KEY (tenant_id, object_id, operation_id),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id) ON DELETE CASCADE
);
-- The cascade's look-up when retention deletes an operation.
CREATE INDEX operation_objects_operation ON operation_objects (tenant_id, operation_id);

-- +goose StatementBegin
CREATE FUNCTION operation_objects_from_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO operation_objects (tenant_id, object_id, operation_id)
        VALUES (NEW.tenant_id, NEW.remote_ref, NEW.operation_id) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER operation_objects_ledger_insert AFTER INSERT ON operation_ledger
    FOR EACH ROW WHEN (NEW.remote_ref IS NOT NULL AND NEW.remote_ref <> '')
    EXECUTE FUNCTION operation_objects_from_ledger();
CREATE TRIGGER operation_objects_ledger_update AFTER UPDATE OF remote_ref ON operation_ledger
    FOR EACH ROW WHEN (NEW.remote_ref IS NOT NULL AND NEW.remote_ref <> '' AND NEW.remote_ref IS DISTINCT FROM OLD.remote_ref)
    EXECUTE FUNCTION operation_objects_from_ledger();

-- +goose StatementBegin
CREATE FUNCTION operation_objects_from_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO operation_objects (tenant_id, object_id, operation_id)
        SELECT NEW.tenant_id, id, NEW.operation_id FROM (
            SELECT NEW.evidence ->> 'remote_id' AS id WHERE jsonb_typeof(NEW.evidence -> 'remote_id') = 'string'
            UNION SELECT jsonb_array_elements_text(NEW.evidence -> 'remote_ids')
                WHERE jsonb_typeof(NEW.evidence -> 'remote_ids') = 'array') ids
        WHERE id <> '' ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER operation_objects_event AFTER INSERT ON operation_events
    FOR EACH ROW WHEN (NEW.evidence ? 'remote_id' OR NEW.evidence ? 'remote_ids')
    EXECUTE FUNCTION operation_objects_from_event();

-- +goose StatementBegin
CREATE FUNCTION operation_objects_from_finding() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO operation_objects (tenant_id, object_id, operation_id)
        SELECT NEW.tenant_id, id, NEW.operation_id FROM jsonb_array_elements_text(NEW.remote_ids::jsonb) AS id
        WHERE id <> '' ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER operation_objects_finding AFTER INSERT OR UPDATE OF remote_ids ON audit_findings
    FOR EACH ROW WHEN (NEW.remote_ids <> '[]')
    EXECUTE FUNCTION operation_objects_from_finding();

-- A quarantined event's operation is text ('' when none); only an id of
-- an operation the ledger holds is recorded.
-- +goose StatementBegin
CREATE FUNCTION operation_objects_from_quarantine() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO operation_objects (tenant_id, object_id, operation_id)
        SELECT o.tenant_id, NEW.remote_id, o.operation_id FROM operation_ledger o
        WHERE o.tenant_id = NEW.operation_tenant AND o.operation_id = NEW.operation_id::uuid
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER operation_objects_quarantine AFTER INSERT OR UPDATE OF remote_id, operation_id ON quarantine
    FOR EACH ROW WHEN (NEW.remote_id <> '' AND NEW.operation_id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
    EXECUTE FUNCTION operation_objects_from_quarantine();

-- What settle saw before this migration.
INSERT INTO operation_objects (tenant_id, object_id, operation_id)
    SELECT tenant_id, remote_ref, operation_id FROM operation_ledger WHERE remote_ref IS NOT NULL AND remote_ref <> ''
    UNION SELECT tenant_id, evidence ->> 'remote_id', operation_id FROM operation_events
        WHERE jsonb_typeof(evidence -> 'remote_id') = 'string' AND evidence ->> 'remote_id' <> ''
    UNION SELECT tenant_id, id, operation_id FROM operation_events, jsonb_array_elements_text(evidence -> 'remote_ids') AS id
        WHERE jsonb_typeof(evidence -> 'remote_ids') = 'array' AND id <> ''
    UNION SELECT tenant_id, id, operation_id FROM audit_findings, jsonb_array_elements_text(remote_ids::jsonb) AS id
        WHERE remote_ids <> '[]' AND id <> ''
    UNION SELECT o.tenant_id, q.remote_id, o.operation_id FROM quarantine q JOIN operation_ledger o
        ON o.tenant_id = q.operation_tenant AND o.operation_id::text = q.operation_id
        WHERE q.remote_id <> ''
    ON CONFLICT DO NOTHING;

-- +goose Down
DROP TRIGGER operation_objects_quarantine ON quarantine;
DROP TRIGGER operation_objects_finding ON audit_findings;
DROP TRIGGER operation_objects_event ON operation_events;
DROP TRIGGER operation_objects_ledger_update ON operation_ledger;
DROP TRIGGER operation_objects_ledger_insert ON operation_ledger;
DROP FUNCTION operation_objects_from_quarantine();
DROP FUNCTION operation_objects_from_finding();
DROP FUNCTION operation_objects_from_event();
DROP FUNCTION operation_objects_from_ledger();
DROP TABLE operation_objects;
