-- +goose Up
-- See the PostgreSQL migration. The operation id is an expression there
-- (its text) and here (lower(), which an id already is), so that the two
-- schemas keep the same index and the search of an id prefix is a range
-- on it.
CREATE INDEX operation_objects_object ON operation_objects (object_id);
CREATE INDEX audit_findings_operation_text ON audit_findings (lower(operation_id));

-- +goose Down
DROP INDEX audit_findings_operation_text;
DROP INDEX operation_objects_object;
