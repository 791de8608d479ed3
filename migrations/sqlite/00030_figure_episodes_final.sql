-- +goose Up
-- The figures measure time to a final outcome (see the PostgreSQL
-- migration of the same number): an episode starts at the first entry
-- into UNKNOWN or ESCALATED from another state and ends at SUCCEEDED or
-- FAILED_TERMINAL; escalated_at, its first entry into ESCALATED, tells one
-- resolved by people. 00018's episodes ended at ESCALATED, so they are
-- rebuilt from the log; figure_days and figure_escalations keep theirs.
DROP TRIGGER operation_events_figure_rollup;
DROP TABLE figure_episodes;
CREATE TABLE figure_episodes (
    tenant_id    TEXT    NOT NULL,
    operation_id TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    entered_at   INTEGER NOT NULL, -- the episode's start
    escalated_at INTEGER,          -- its first entry into ESCALATED
    final_at     INTEGER,          -- SUCCEEDED or FAILED_TERMINAL
    final_state  TEXT,
    PRIMARY KEY (tenant_id, operation_id, entered_at)
);
CREATE INDEX figure_episodes_tenant_entered ON figure_episodes (tenant_id, entered_at);

-- The common send (IN_FLIGHT → SUCCEEDED or FAILED_TERMINAL) runs this
-- one statement only: no episode can be open for it.
-- +goose StatementBegin
CREATE TRIGGER operation_events_figure_rollup AFTER INSERT ON operation_events
    WHEN NEW.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
BEGIN
    INSERT OR IGNORE INTO figure_days (tenant_id, target, day)
        SELECT NEW.tenant_id, target, date(NEW.at / 1000000, 'unixepoch') FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER operation_events_figure_episode AFTER INSERT ON operation_events
    WHEN NEW.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
        AND NOT (NEW.from_state = 'IN_FLIGHT' AND NEW.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL'))
BEGIN
    INSERT OR IGNORE INTO figure_episodes (tenant_id, operation_id, target, entered_at, escalated_at)
        SELECT NEW.tenant_id, NEW.operation_id, target, NEW.at,
            CASE WHEN NEW.to_state = 'ESCALATED' THEN NEW.at END
        FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
            AND NEW.to_state IN ('UNKNOWN', 'ESCALATED')
            AND coalesce(NEW.from_state, '') NOT IN ('UNKNOWN', 'ESCALATED');
    UPDATE figure_episodes SET escalated_at = NEW.at
        WHERE NEW.to_state = 'ESCALATED' AND NEW.from_state IN ('UNKNOWN', 'ESCALATED')
            AND tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
            AND final_at IS NULL AND escalated_at IS NULL AND entered_at <= NEW.at;
    UPDATE figure_episodes SET final_at = NEW.at, final_state = NEW.to_state
        WHERE NEW.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL')
            AND tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
            AND final_at IS NULL AND entered_at <= NEW.at;
    INSERT INTO figure_escalations (tenant_id, target, at)
        SELECT NEW.tenant_id, target, NEW.at FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id AND NEW.to_state = 'ESCALATED';
END;
-- +goose StatementEnd

-- The episodes of the history so far, as the triggers would have written them.
INSERT OR IGNORE INTO figure_episodes (tenant_id, operation_id, target, entered_at, escalated_at, final_at, final_state)
    SELECT s.tenant_id, s.operation_id, s.target, s.at,
        (SELECT x.at FROM operation_events x
            WHERE x.tenant_id = s.tenant_id AND x.operation_id = s.operation_id AND x.event_id >= s.event_id
                AND x.to_state = 'ESCALATED' AND x.at >= s.at AND (s.fin_id IS NULL OR x.event_id < s.fin_id)
            ORDER BY x.event_id LIMIT 1),
        (SELECT at FROM operation_events WHERE event_id = s.fin_id),
        (SELECT to_state FROM operation_events WHERE event_id = s.fin_id)
    FROM (SELECT e.tenant_id, e.operation_id, e.event_id, e.at, o.target,
            (SELECT r.event_id FROM operation_events r
                WHERE r.tenant_id = e.tenant_id AND r.operation_id = e.operation_id AND r.event_id > e.event_id
                    AND r.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND r.at >= e.at
                ORDER BY r.event_id LIMIT 1) AS fin_id
        FROM operation_events e JOIN operation_ledger o ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
        WHERE e.to_state IN ('UNKNOWN', 'ESCALATED') AND coalesce(e.from_state, '') NOT IN ('UNKNOWN', 'ESCALATED')) s;

-- +goose Down
-- 00018's episodes, which ended at ESCALATED too.
DROP TRIGGER operation_events_figure_episode;
DROP TRIGGER operation_events_figure_rollup;
DROP TABLE figure_episodes;
CREATE TABLE figure_episodes (
    tenant_id    TEXT    NOT NULL,
    operation_id TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    entered_at   INTEGER NOT NULL,
    resolved_at  INTEGER,
    PRIMARY KEY (tenant_id, operation_id, entered_at)
);
CREATE INDEX figure_episodes_tenant_entered ON figure_episodes (tenant_id, entered_at);
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

INSERT OR IGNORE INTO figure_episodes (tenant_id, operation_id, target, entered_at, resolved_at)
    SELECT e.tenant_id, e.operation_id, o.target, e.at,
        (SELECT r.at FROM operation_events r
            WHERE r.tenant_id = e.tenant_id AND r.operation_id = e.operation_id AND r.event_id > e.event_id
                AND r.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED') AND r.at >= e.at
            ORDER BY r.event_id LIMIT 1)
    FROM operation_events e JOIN operation_ledger o ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
    WHERE e.to_state = 'UNKNOWN' AND coalesce(e.from_state, '') <> 'UNKNOWN';
