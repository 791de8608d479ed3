-- +goose Up
-- See the PostgreSQL migration: every object id settle has seen for an
-- operation, for the support search, filled by triggers.
CREATE TABLE operation_objects (
    tenant_id    TEXT NOT NULL,
    object_id    TEXT NOT NULL,
    operation_id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, object_id, operation_id),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX operation_objects_operation ON operation_objects (tenant_id, operation_id);

-- +goose StatementBegin
CREATE TRIGGER operation_objects_ledger_insert AFTER INSERT ON operation_ledger
    WHEN NEW.remote_ref IS NOT NULL AND NEW.remote_ref <> ''
BEGIN
    INSERT OR IGNORE INTO operation_objects (tenant_id, object_id, operation_id)
        VALUES (NEW.tenant_id, NEW.remote_ref, NEW.operation_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER operation_objects_ledger_update AFTER UPDATE OF remote_ref ON operation_ledger
    WHEN NEW.remote_ref IS NOT NULL AND NEW.remote_ref <> '' AND NEW.remote_ref IS NOT OLD.remote_ref
BEGIN
    INSERT OR IGNORE INTO operation_objects (tenant_id, object_id, operation_id)
        VALUES (NEW.tenant_id, NEW.remote_ref, NEW.operation_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER operation_objects_event AFTER INSERT ON operation_events
    WHEN json_type(NEW.evidence, '$.remote_id') = 'text' OR json_type(NEW.evidence, '$.remote_ids') = 'array'
BEGIN
    INSERT OR IGNORE INTO operation_objects (tenant_id, object_id, operation_id)
        SELECT NEW.tenant_id, json_extract(NEW.evidence, '$.remote_id'), NEW.operation_id
        WHERE json_type(NEW.evidence, '$.remote_id') = 'text' AND json_extract(NEW.evidence, '$.remote_id') <> ''
        UNION SELECT NEW.tenant_id, value, NEW.operation_id FROM json_each(NEW.evidence, '$.remote_ids')
        WHERE type = 'text' AND value <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER operation_objects_finding_insert AFTER INSERT ON audit_findings
    WHEN NEW.remote_ids <> '[]'
BEGIN
    INSERT OR IGNORE INTO operation_objects (tenant_id, object_id, operation_id)
        SELECT NEW.tenant_id, value, NEW.operation_id FROM json_each(NEW.remote_ids) WHERE type = 'text' AND value <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER operation_objects_finding_update AFTER UPDATE OF remote_ids ON audit_findings
    WHEN NEW.remote_ids <> '[]'
BEGIN
    INSERT OR IGNORE INTO operation_objects (tenant_id, object_id, operation_id)
        SELECT NEW.tenant_id, value, NEW.operation_id FROM json_each(NEW.remote_ids) WHERE type = 'text' AND value <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER operation_objects_quarantine_insert AFTER INSERT ON quarantine
    WHEN NEW.remote_id <> '' AND NEW.operation_id <> ''
BEGIN
    INSERT OR IGNORE INTO operation_objects (tenant_id, object_id, operation_id)
        SELECT o.tenant_id, NEW.remote_id, o.operation_id FROM operation_ledger o
        WHERE o.tenant_id = NEW.operation_tenant AND o.operation_id = NEW.operation_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER operation_objects_quarantine_update AFTER UPDATE OF remote_id, operation_id ON quarantine
    WHEN NEW.remote_id <> '' AND NEW.operation_id <> ''
BEGIN
    INSERT OR IGNORE INTO operation_objects (tenant_id, object_id, operation_id)
        SELECT o.tenant_id, NEW.remote_id, o.operation_id FROM operation_ledger o
        WHERE o.tenant_id = NEW.operation_tenant AND o.operation_id = NEW.operation_id;
END;
-- +goose StatementEnd

INSERT OR IGNORE INTO operation_objects (tenant_id, object_id, operation_id)
    SELECT tenant_id, remote_ref, operation_id FROM operation_ledger WHERE remote_ref IS NOT NULL AND remote_ref <> ''
    UNION SELECT tenant_id, json_extract(evidence, '$.remote_id'), operation_id FROM operation_events
        WHERE json_type(evidence, '$.remote_id') = 'text' AND json_extract(evidence, '$.remote_id') <> ''
    UNION SELECT e.tenant_id, j.value, e.operation_id FROM operation_events e, json_each(e.evidence, '$.remote_ids') j
        WHERE json_type(e.evidence, '$.remote_ids') = 'array' AND j.type = 'text' AND j.value <> ''
    UNION SELECT a.tenant_id, j.value, a.operation_id FROM audit_findings a, json_each(a.remote_ids) j
        WHERE a.remote_ids <> '[]' AND j.type = 'text' AND j.value <> ''
    UNION SELECT o.tenant_id, q.remote_id, o.operation_id FROM quarantine q JOIN operation_ledger o
        ON o.tenant_id = q.operation_tenant AND o.operation_id = q.operation_id
        WHERE q.remote_id <> '';

-- +goose Down
DROP TRIGGER operation_objects_quarantine_update;
DROP TRIGGER operation_objects_quarantine_insert;
DROP TRIGGER operation_objects_finding_update;
DROP TRIGGER operation_objects_finding_insert;
DROP TRIGGER operation_objects_event;
DROP TRIGGER operation_objects_ledger_update;
DROP TRIGGER operation_objects_ledger_insert;
DROP TABLE operation_objects;
