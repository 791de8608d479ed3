-- +goose Up
-- Every human action (a proposal, an approval, a quarantine decision, a
-- token or callback change) is recorded with the actor's stable identity,
-- in the same transaction as the change. Like operation_events, the record
-- is append-only.
CREATE TABLE actions (
    action_id    bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    text        NOT NULL,
    at           timestamptz NOT NULL,
    subject      text        NOT NULL CHECK (subject <> ''),
    actor_name   text        NOT NULL DEFAULT '',
    role         text        NOT NULL CHECK (role <> ''),
    kind         text        NOT NULL CHECK (kind IN ('resolution.propose', 'resolution.approve',
                     'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
                     'callback.set', 'callback.remove')),
    object       text        NOT NULL DEFAULT '',
    operation_id text        NOT NULL DEFAULT '',
    reason       text        NOT NULL DEFAULT '',
    request_id   text        NOT NULL DEFAULT ''
);
CREATE INDEX actions_tenant ON actions (tenant_id, action_id);
CREATE INDEX actions_operation ON actions (tenant_id, operation_id, action_id) WHERE operation_id <> '';

-- +goose StatementBegin
CREATE FUNCTION actions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'actions is append-only';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER actions_append_only BEFORE UPDATE OR DELETE ON actions
    FOR EACH ROW EXECUTE FUNCTION actions_append_only();

-- A resolution keeps both people's stable subjects (the two-person rule
-- compares them) and their display names. Before this migration only the
-- CLI proposed and decided, with a free-text --by name: that name becomes
-- the CLI's subject "cli:<name>" and the display name.
ALTER TABLE resolutions ADD COLUMN proposed_by_name text NOT NULL DEFAULT '',
    ADD COLUMN decided_by_name text NOT NULL DEFAULT '';
UPDATE resolutions SET proposed_by_name = proposed_by,
    proposed_by = CASE WHEN strpos(proposed_by, ':') > 0 THEN proposed_by ELSE 'cli:' || proposed_by END;
UPDATE resolutions SET decided_by_name = decided_by,
    decided_by = CASE WHEN strpos(decided_by, ':') > 0 THEN decided_by ELSE 'cli:' || decided_by END
    WHERE decided_by <> '';

-- A quarantined item is visible to, and resolved by, one tenant's people:
-- the linked operation's tenant when the event concerns a known operation,
-- else the tenant the event claims ("" = unattributed). The rule is
-- ledger.QuarantineItem.ScopeTenant; this backfills it.
ALTER TABLE quarantine ADD COLUMN scope_tenant text NOT NULL DEFAULT '';
UPDATE quarantine SET scope_tenant = CASE WHEN operation_id <> '' THEN operation_tenant ELSE claimed_tenant END;
-- The reviewer, like a resolution's people: subject and display name.
ALTER TABLE quarantine ADD COLUMN resolved_by_name text NOT NULL DEFAULT '';
UPDATE quarantine SET resolved_by_name = resolved_by,
    resolved_by = CASE WHEN strpos(resolved_by, ':') > 0 THEN resolved_by ELSE 'cli:' || resolved_by END
    WHERE resolved_by <> '';
CREATE INDEX quarantine_scope ON quarantine (scope_tenant, quarantine_id);

-- +goose Down
DROP INDEX quarantine_scope;
ALTER TABLE quarantine DROP COLUMN resolved_by_name, DROP COLUMN scope_tenant;
ALTER TABLE resolutions DROP COLUMN decided_by_name, DROP COLUMN proposed_by_name;
DROP TABLE actions;
DROP FUNCTION actions_append_only();
