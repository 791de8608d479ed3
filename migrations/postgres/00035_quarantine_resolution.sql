-- +goose Up
-- What a reviewer did with a quarantined event: 'linked' it to an
-- operation as evidence or 'dismissed' it ('' while open), and the role in
-- which they did it, so that the Resolved tab says what happened and by
-- whom without reading the event log. Backfilled from the actions table
-- (its object is the item's number).
ALTER TABLE quarantine ADD COLUMN resolution_kind text NOT NULL DEFAULT '',
    ADD COLUMN resolved_by_role text NOT NULL DEFAULT '';
UPDATE quarantine q SET resolution_kind = CASE WHEN a.kind = 'quarantine.link' THEN 'linked' ELSE 'dismissed' END,
    resolved_by_role = a.role
    FROM actions a
    WHERE q.resolved_at IS NOT NULL AND a.tenant_id = q.scope_tenant AND a.object = q.quarantine_id::text
        AND a.kind IN ('quarantine.link', 'quarantine.resolve');
UPDATE quarantine SET resolution_kind = 'dismissed' WHERE resolved_at IS NOT NULL AND resolution_kind = '';
-- The open queue's pages, newest first, whatever the number of resolved
-- items kept beside them.
CREATE INDEX quarantine_open_id ON quarantine (quarantine_id) WHERE resolved_at IS NULL;
-- A reference as a person pastes it (the list's search): the event's id
-- or its claimed reference in any case, the target's object id, the
-- operation's id or a prefix of it (text_pattern_ops serves the LIKE).
CREATE INDEX quarantine_event_id ON quarantine (lower(event_id));
CREATE INDEX quarantine_reference ON quarantine (lower(claimed_reference));
CREATE INDEX quarantine_remote_id ON quarantine (remote_id);
CREATE INDEX quarantine_operation ON quarantine (operation_id text_pattern_ops);

-- +goose Down
DROP INDEX quarantine_operation;
DROP INDEX quarantine_remote_id;
DROP INDEX quarantine_reference;
DROP INDEX quarantine_event_id;
DROP INDEX quarantine_open_id;
ALTER TABLE quarantine DROP COLUMN resolved_by_role, DROP COLUMN resolution_kind;
