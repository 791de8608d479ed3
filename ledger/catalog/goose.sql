-- goose's own table, as goose creates it, for sqlc's catalog only: the
-- migrations never create it, and settle reads it to know which migrations
-- a database has applied. Both dialects' goose tables have these columns.
CREATE TABLE goose_db_version (
    id BIGINT PRIMARY KEY,
    version_id BIGINT NOT NULL,
    is_applied BOOLEAN NOT NULL,
    tstamp TIMESTAMP
);
