-- +goose Up
-- The findings list's search by a pasted reference, driven by the
-- findings that name it instead of a walk of every open finding (67–111 ms
-- at 100,000): an object id through operation_objects (every id settle
-- has seen for the operation, a finding's own ids among them; its primary
-- key leads with the tenant, and a search of every tenant's findings
-- knows none), and the operation's id or a prefix of it through its text
-- (text_pattern_ops serves the LIKE).
CREATE INDEX operation_objects_object ON operation_objects (object_id);
CREATE INDEX audit_findings_operation_text ON audit_findings ((operation_id::text) text_pattern_ops);

-- +goose Down
DROP INDEX audit_findings_operation_text;
DROP INDEX operation_objects_object;
