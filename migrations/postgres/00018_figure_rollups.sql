-- +goose Up
-- Rollups for the manager figures, kept by the transitions themselves: a
-- trigger on the event log writes them in the transaction that appends
-- the event, so they are never behind and no loop is needed. Reading a
-- tenant's 30 days from operation_events took seconds at 10 million
-- operations (docs/performance.md); these tables hold only the rare
-- states, so the figures read a few thousand rows at most.
--
-- figure_days: a target had a transition into UNKNOWN, SUCCEEDED,
-- FAILED_TERMINAL or ESCALATED on that UTC day (the figures list such a
-- target with zeros). Inserted with ON CONFLICT DO NOTHING, which takes no
-- row lock, so that concurrent successes do not queue on one row.
CREATE TABLE figure_days (
    tenant_id text NOT NULL,
    target    text NOT NULL,
    day       date NOT NULL,
    PRIMARY KEY (tenant_id, day, target)
);
-- figure_episodes: one row per entry into UNKNOWN, closed by the first
-- later transition into SUCCEEDED, FAILED_TERMINAL or ESCALATED. The
-- median and worst time to resolution are computed exactly from these.
CREATE TABLE figure_episodes (
    tenant_id    text        NOT NULL,
    operation_id uuid        NOT NULL,
    target       text        NOT NULL,
    entered_at   timestamptz NOT NULL,
    resolved_at  timestamptz,
    PRIMARY KEY (tenant_id, operation_id, entered_at)
);
CREATE INDEX figure_episodes_tenant_entered ON figure_episodes (tenant_id, entered_at);
-- figure_escalations: one row per transition into ESCALATED, appended, so
-- that a wave of escalations never contends for a counter.
CREATE TABLE figure_escalations (
    tenant_id text        NOT NULL,
    target    text        NOT NULL,
    at        timestamptz NOT NULL
);
CREATE INDEX figure_escalations_tenant_at ON figure_escalations (tenant_id, at);

-- +goose StatementBegin
CREATE FUNCTION figure_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tgt text;
BEGIN
    INSERT INTO figure_days (tenant_id, target, day)
        SELECT NEW.tenant_id, target, (NEW.at AT TIME ZONE 'UTC')::date FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
        ON CONFLICT DO NOTHING;
    -- The common case ends here, one statement per event: a send answered
    -- at once. No UNKNOWN episode can be open (nothing leads from UNKNOWN
    -- back to IN_FLIGHT).
    IF NEW.from_state = 'IN_FLIGHT' AND NEW.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL') THEN
        RETURN NULL;
    END IF;
    SELECT target INTO tgt FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id;
    IF NEW.to_state = 'UNKNOWN' THEN
        IF coalesce(NEW.from_state, '') <> 'UNKNOWN' THEN
            INSERT INTO figure_episodes (tenant_id, operation_id, target, entered_at)
                VALUES (NEW.tenant_id, NEW.operation_id, tgt, NEW.at)
                ON CONFLICT DO NOTHING;
        END IF;
        RETURN NULL;
    END IF;
    -- A resolution stamped before the entry (another replica's clock)
    -- leaves the episode open, as reading the log in time order does.
    UPDATE figure_episodes SET resolved_at = NEW.at
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
            AND resolved_at IS NULL AND entered_at <= NEW.at;
    IF NEW.to_state = 'ESCALATED' THEN
        INSERT INTO figure_escalations (tenant_id, target, at) VALUES (NEW.tenant_id, tgt, NEW.at);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER operation_events_figure_rollup AFTER INSERT ON operation_events
    FOR EACH ROW WHEN (NEW.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED'))
    EXECUTE FUNCTION figure_rollup();

-- The history so far, as the trigger would have written it. A function,
-- so that a bulk load (TestPlans, BenchmarkFigures), which fills the event
-- log with the trigger disabled, builds the rollups the same way.
-- +goose StatementBegin
CREATE FUNCTION figure_rollup_backfill() RETURNS void LANGUAGE sql AS $$
INSERT INTO figure_days (tenant_id, target, day)
    SELECT DISTINCT e.tenant_id, o.target, (e.at AT TIME ZONE 'UTC')::date
    FROM operation_events e JOIN operation_ledger o USING (tenant_id, operation_id)
    WHERE e.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
    ON CONFLICT DO NOTHING;
INSERT INTO figure_episodes (tenant_id, operation_id, target, entered_at, resolved_at)
    SELECT e.tenant_id, e.operation_id, o.target, e.at,
        (SELECT r.at FROM operation_events r
            WHERE r.tenant_id = e.tenant_id AND r.operation_id = e.operation_id AND r.event_id > e.event_id
                AND r.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED') AND r.at >= e.at
            ORDER BY r.event_id LIMIT 1)
    FROM operation_events e JOIN operation_ledger o USING (tenant_id, operation_id)
    WHERE e.to_state = 'UNKNOWN' AND coalesce(e.from_state, '') <> 'UNKNOWN'
    ON CONFLICT DO NOTHING;
INSERT INTO figure_escalations (tenant_id, target, at)
    SELECT e.tenant_id, o.target, e.at
    FROM operation_events e JOIN operation_ledger o USING (tenant_id, operation_id)
    WHERE e.to_state = 'ESCALATED';
$$;
-- +goose StatementEnd
SELECT figure_rollup_backfill();

-- +goose Down
DROP TRIGGER operation_events_figure_rollup ON operation_events;
DROP FUNCTION figure_rollup();
DROP FUNCTION figure_rollup_backfill();
DROP TABLE figure_escalations;
DROP TABLE figure_episodes;
DROP TABLE figure_days;
