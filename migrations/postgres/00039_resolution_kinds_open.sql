-- +goose Up
-- A proposal's kind is checked in Go (ledger.ValidateProposal; a
-- conformance case writes every kind through both stores), not by a list
-- in the schema: a new kind then needs no migration, and SQLite no table
-- rebuild. The column only refuses an empty kind.
ALTER TABLE resolutions DROP CONSTRAINT resolutions_kind_check;
ALTER TABLE resolutions ADD CONSTRAINT resolutions_kind_check CHECK (kind <> '');

-- +goose Down
ALTER TABLE resolutions DROP CONSTRAINT resolutions_kind_check;
ALTER TABLE resolutions ADD CONSTRAINT resolutions_kind_check
    CHECK (kind IN ('confirm_succeeded', 'confirm_not_applied', 'replay', 'supersede'));
