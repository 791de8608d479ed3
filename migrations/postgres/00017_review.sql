-- +goose Up
-- Owners review audit findings in the console: acknowledging one records
-- who read it, when, and their note (the finding stays: re-auditing finds
-- the same discrepancy, and the open-finding index keeps it one row, now
-- acknowledged). The actions record gains the two review actions.
ALTER TABLE audit_findings ADD COLUMN acknowledged_at timestamptz,
    ADD COLUMN acknowledged_by text NOT NULL DEFAULT '',
    ADD COLUMN acknowledged_by_name text NOT NULL DEFAULT '',
    ADD COLUMN acknowledgement text NOT NULL DEFAULT '';
-- One operation's findings, for the banner on its page.
CREATE INDEX audit_findings_operation ON audit_findings (tenant_id, operation_id, finding_id);
-- The findings page's default view: the ones still waiting for a person.
CREATE INDEX audit_findings_waiting ON audit_findings (finding_id)
    WHERE acknowledged_at IS NULL AND resolved_at IS NULL;

ALTER TABLE actions DROP CONSTRAINT actions_kind_check,
    ADD CONSTRAINT actions_kind_check CHECK (kind IN ('resolution.propose', 'resolution.approve',
        'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
        'callback.set', 'callback.remove', 'quarantine.link', 'finding.acknowledge'));

-- +goose Down
-- The record is append-only: recorded review actions stay, and only new
-- rows are held to the older list (NOT VALID skips the existing ones).
ALTER TABLE actions DROP CONSTRAINT actions_kind_check,
    ADD CONSTRAINT actions_kind_check CHECK (kind IN ('resolution.propose', 'resolution.approve',
        'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
        'callback.set', 'callback.remove')) NOT VALID;
DROP INDEX audit_findings_waiting;
DROP INDEX audit_findings_operation;
ALTER TABLE audit_findings DROP COLUMN acknowledgement, DROP COLUMN acknowledged_by_name,
    DROP COLUMN acknowledged_by, DROP COLUMN acknowledged_at;
