-- +goose Up
-- Rollups for the manager figures, kept by the transitions themselves (see
-- the PostgreSQL migration of the same number for the reasoning). Times
-- are microseconds since the epoch, days "YYYY-MM-DD" in UTC.
CREATE TABLE figure_days (
    tenant_id TEXT NOT NULL,
    target    TEXT NOT NULL,
    day       TEXT NOT NULL,
    PRIMARY KEY (tenant_id, day, target)
);
CREATE TABLE figure_episodes (
    tenant_id    TEXT    NOT NULL,
    operation_id TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    entered_at   INTEGER NOT NULL,
    resolved_at  INTEGER,
    PRIMARY KEY (tenant_id, operation_id, entered_at)
);
CREATE INDEX figure_episodes_tenant_entered ON figure_episodes (tenant_id, entered_at);
CREATE TABLE figure_escalations (
    tenant_id TEXT    NOT NULL,
    target    TEXT    NOT NULL,
    at        INTEGER NOT NULL
);
CREATE INDEX figure_escalations_tenant_at ON figure_escalations (tenant_id, at);

-- +goose StatementBegin
CREATE TRIGGER operation_events_figure_rollup AFTER INSERT ON operation_events
    WHEN NEW.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
BEGIN
    INSERT OR IGNORE INTO figure_days (tenant_id, target, day)
        SELECT NEW.tenant_id, target, date(NEW.at / 1000000, 'unixepoch') FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id;
    INSERT OR IGNORE INTO figure_episodes (tenant_id, operation_id, target, entered_at)
        SELECT NEW.tenant_id, NEW.operation_id, target, NEW.at FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
            AND NEW.to_state = 'UNKNOWN' AND coalesce(NEW.from_state, '') <> 'UNKNOWN';
    UPDATE figure_episodes SET resolved_at = NEW.at
        WHERE NEW.to_state <> 'UNKNOWN' AND tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
            AND resolved_at IS NULL AND entered_at <= NEW.at;
    INSERT INTO figure_escalations (tenant_id, target, at)
        SELECT NEW.tenant_id, target, NEW.at FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id AND NEW.to_state = 'ESCALATED';
END;
-- +goose StatementEnd

-- The history so far, as the trigger would have written it.
INSERT OR IGNORE INTO figure_days (tenant_id, target, day)
    SELECT DISTINCT e.tenant_id, o.target, date(e.at / 1000000, 'unixepoch')
    FROM operation_events e JOIN operation_ledger o ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
    WHERE e.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED');
INSERT OR IGNORE INTO figure_episodes (tenant_id, operation_id, target, entered_at, resolved_at)
    SELECT e.tenant_id, e.operation_id, o.target, e.at,
        (SELECT r.at FROM operation_events r
            WHERE r.tenant_id = e.tenant_id AND r.operation_id = e.operation_id AND r.event_id > e.event_id
                AND r.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED') AND r.at >= e.at
            ORDER BY r.event_id LIMIT 1)
    FROM operation_events e JOIN operation_ledger o ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
    WHERE e.to_state = 'UNKNOWN' AND coalesce(e.from_state, '') <> 'UNKNOWN';
INSERT INTO figure_escalations (tenant_id, target, at)
    SELECT e.tenant_id, o.target, e.at
    FROM operation_events e JOIN operation_ledger o ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
    WHERE e.to_state = 'ESCALATED';

-- +goose Down
DROP TRIGGER operation_events_figure_rollup;
DROP TABLE figure_escalations;
DROP TABLE figure_episodes;
DROP TABLE figure_days;
