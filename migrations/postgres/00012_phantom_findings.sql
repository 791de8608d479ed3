-- +goose Up
-- The auditor also checks FAILED_TERMINAL operations: an object at the
-- target carrying the reference and tenant of an operation settle calls
-- "Not applied" is a phantom finding.
ALTER TABLE audit_findings DROP CONSTRAINT audit_findings_kind_check,
    ADD CONSTRAINT audit_findings_kind_check CHECK (kind IN ('duplicate', 'loss', 'phantom'));

-- The auditor's walk: both final states of one target in creation order.
DROP INDEX operation_ledger_audit;
CREATE INDEX operation_ledger_audit ON operation_ledger (target, created_at, operation_id)
    WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL');

-- +goose Down
DROP INDEX operation_ledger_audit;
CREATE INDEX operation_ledger_audit ON operation_ledger (target, created_at, operation_id)
    WHERE state = 'SUCCEEDED';
DELETE FROM audit_findings WHERE kind = 'phantom';
ALTER TABLE audit_findings DROP CONSTRAINT audit_findings_kind_check,
    ADD CONSTRAINT audit_findings_kind_check CHECK (kind IN ('duplicate', 'loss'));
