-- +goose Up
-- The figures measure time to a final outcome. An episode starts at the
-- first entry into UNKNOWN or ESCALATED from another state (an operation
-- escalated straight from IN_FLIGHT starts one too) and ends at SUCCEEDED
-- or FAILED_TERMINAL; moves between UNKNOWN and ESCALATED (an escalation,
-- an approved same-key replay) stay within it. escalated_at, the first
-- entry into ESCALATED, tells an episode resolved by people from one
-- resolved automatically (ledger.ComputeFigures, the one definition).
-- 00018's episodes ended at ESCALATED, so they are rebuilt from the log.
DROP TABLE figure_episodes;
CREATE TABLE figure_episodes (
    tenant_id    text        NOT NULL,
    operation_id uuid        NOT NULL,
    target       text        NOT NULL,
    entered_at   timestamptz NOT NULL, -- the episode's start
    escalated_at timestamptz,          -- its first entry into ESCALATED
    final_at     timestamptz,          -- SUCCEEDED or FAILED_TERMINAL
    final_state  text,
    PRIMARY KEY (tenant_id, operation_id, entered_at)
);
CREATE INDEX figure_episodes_tenant_entered ON figure_episodes (tenant_id, entered_at);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION figure_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tgt text;
BEGIN
    INSERT INTO figure_days (tenant_id, target, day)
        SELECT NEW.tenant_id, target, (NEW.at AT TIME ZONE 'UTC')::date FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
        ON CONFLICT DO NOTHING;
    -- The common case ends here, one statement per event: a send answered
    -- at once. No episode can be open (nothing leads from UNKNOWN or
    -- ESCALATED back to IN_FLIGHT).
    IF NEW.from_state = 'IN_FLIGHT' AND NEW.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL') THEN
        RETURN NULL;
    END IF;
    SELECT target INTO tgt FROM operation_ledger
        WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id;
    IF NEW.to_state IN ('UNKNOWN', 'ESCALATED') AND coalesce(NEW.from_state, '') NOT IN ('UNKNOWN', 'ESCALATED') THEN
        INSERT INTO figure_episodes (tenant_id, operation_id, target, entered_at, escalated_at)
            VALUES (NEW.tenant_id, NEW.operation_id, tgt, NEW.at,
                CASE WHEN NEW.to_state = 'ESCALATED' THEN NEW.at END)
            ON CONFLICT DO NOTHING;
    -- A change stamped before the episode's start (another replica's
    -- clock) leaves the episode as it is, as reading the log in time
    -- order does.
    ELSIF NEW.to_state = 'ESCALATED' THEN
        UPDATE figure_episodes SET escalated_at = NEW.at
            WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
                AND final_at IS NULL AND escalated_at IS NULL AND entered_at <= NEW.at;
    ELSIF NEW.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL') THEN
        UPDATE figure_episodes SET final_at = NEW.at, final_state = NEW.to_state
            WHERE tenant_id = NEW.tenant_id AND operation_id = NEW.operation_id
                AND final_at IS NULL AND entered_at <= NEW.at;
    END IF;
    IF NEW.to_state = 'ESCALATED' THEN
        INSERT INTO figure_escalations (tenant_id, target, at) VALUES (NEW.tenant_id, tgt, NEW.at);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- The episodes of the history so far, as the trigger would have written
-- them; figure_rollup_backfill (a bulk load, TestPlans and
-- BenchmarkFigures, fills the log with the trigger disabled) calls it too.
-- +goose StatementBegin
CREATE FUNCTION figure_episodes_backfill() RETURNS void LANGUAGE sql AS $$
INSERT INTO figure_episodes (tenant_id, operation_id, target, entered_at, escalated_at, final_at, final_state)
    SELECT e.tenant_id, e.operation_id, o.target, e.at,
        (SELECT x.at FROM operation_events x
            WHERE x.tenant_id = e.tenant_id AND x.operation_id = e.operation_id AND x.event_id >= e.event_id
                AND x.to_state = 'ESCALATED' AND x.at >= e.at
                AND (fin.event_id IS NULL OR x.event_id < fin.event_id)
            ORDER BY x.event_id LIMIT 1),
        fin.at, fin.to_state
    FROM operation_events e JOIN operation_ledger o USING (tenant_id, operation_id)
    LEFT JOIN LATERAL (SELECT r.event_id, r.at, r.to_state FROM operation_events r
            WHERE r.tenant_id = e.tenant_id AND r.operation_id = e.operation_id AND r.event_id > e.event_id
                AND r.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND r.at >= e.at
            ORDER BY r.event_id LIMIT 1) fin ON true
    WHERE e.to_state IN ('UNKNOWN', 'ESCALATED') AND coalesce(e.from_state, '') NOT IN ('UNKNOWN', 'ESCALATED')
    ON CONFLICT DO NOTHING;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION figure_rollup_backfill() RETURNS void LANGUAGE sql AS $$
INSERT INTO figure_days (tenant_id, target, day)
    SELECT DISTINCT e.tenant_id, o.target, (e.at AT TIME ZONE 'UTC')::date
    FROM operation_events e JOIN operation_ledger o USING (tenant_id, operation_id)
    WHERE e.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
    ON CONFLICT DO NOTHING;
SELECT figure_episodes_backfill();
INSERT INTO figure_escalations (tenant_id, target, at)
    SELECT e.tenant_id, o.target, e.at
    FROM operation_events e JOIN operation_ledger o USING (tenant_id, operation_id)
    WHERE e.to_state = 'ESCALATED';
$$;
-- +goose StatementEnd
-- figure_days and figure_escalations keep their meaning and their rows.
SELECT figure_episodes_backfill();

-- +goose Down
-- 00018's episodes, which ended at ESCALATED too.
DROP FUNCTION figure_episodes_backfill();
DROP TABLE figure_episodes;
CREATE TABLE figure_episodes (
    tenant_id    text        NOT NULL,
    operation_id uuid        NOT NULL,
    target       text        NOT NULL,
    entered_at   timestamptz NOT NULL,
    resolved_at  timestamptz,
    PRIMARY KEY (tenant_id, operation_id, entered_at)
);
CREATE INDEX figure_episodes_tenant_entered ON figure_episodes (tenant_id, entered_at);
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION figure_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION figure_rollup_backfill() RETURNS void LANGUAGE sql AS $$
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
INSERT INTO figure_episodes (tenant_id, operation_id, target, entered_at, resolved_at)
    SELECT e.tenant_id, e.operation_id, o.target, e.at,
        (SELECT r.at FROM operation_events r
            WHERE r.tenant_id = e.tenant_id AND r.operation_id = e.operation_id AND r.event_id > e.event_id
                AND r.to_state IN ('SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED') AND r.at >= e.at
            ORDER BY r.event_id LIMIT 1)
    FROM operation_events e JOIN operation_ledger o USING (tenant_id, operation_id)
    WHERE e.to_state = 'UNKNOWN' AND coalesce(e.from_state, '') <> 'UNKNOWN'
    ON CONFLICT DO NOTHING;
