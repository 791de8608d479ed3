-- +goose Up
-- The escalation queue's proposals come in kinds: confirm succeeded,
-- confirm not applied, and authorise one same-key replay, whose approval
-- hands the operation back to the reconciler (ESCALATED → UNKNOWN).
ALTER TABLE resolutions ADD COLUMN kind text NOT NULL DEFAULT '';
UPDATE resolutions SET kind = CASE to_state WHEN 'SUCCEEDED' THEN 'confirm_succeeded' ELSE 'confirm_not_applied' END;
ALTER TABLE resolutions ADD CONSTRAINT resolutions_kind_check
    CHECK (kind IN ('confirm_succeeded', 'confirm_not_applied', 'replay'));
ALTER TABLE resolutions DROP CONSTRAINT resolutions_to_state_check;
ALTER TABLE resolutions ADD CONSTRAINT resolutions_to_state_check
    CHECK (to_state IN ('SUCCEEDED', 'FAILED_TERMINAL', 'UNKNOWN'));
-- The proposals view lists the open proposals of many tenants at once.
CREATE INDEX resolutions_open_all ON resolutions (resolution_id) WHERE decided_at IS NULL;

-- +goose Down
DROP INDEX resolutions_open_all;
DELETE FROM resolutions WHERE kind = 'replay';
ALTER TABLE resolutions DROP CONSTRAINT resolutions_to_state_check;
ALTER TABLE resolutions ADD CONSTRAINT resolutions_to_state_check
    CHECK (to_state IN ('SUCCEEDED', 'FAILED_TERMINAL'));
ALTER TABLE resolutions DROP CONSTRAINT resolutions_kind_check;
ALTER TABLE resolutions DROP COLUMN kind;
