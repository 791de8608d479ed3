-- +goose Up
-- The quarantine's age filter ("older than") as a bound on the id: the
-- newest id among the events quarantined before the cutoff is read from
-- this index (its entries only), and the list then walks down from there
-- instead of through every newer event (86 ms at 100,000 on SQLite).
CREATE INDEX quarantine_time ON quarantine (quarantined_at, quarantine_id);

-- +goose Down
DROP INDEX quarantine_time;
