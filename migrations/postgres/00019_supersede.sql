-- +goose Up
-- A fourth kind of proposal: supersede closes the operation as not applied
-- (the target confirmed absence) and registers a successor intent.
ALTER TABLE resolutions DROP CONSTRAINT resolutions_kind_check;
ALTER TABLE resolutions ADD CONSTRAINT resolutions_kind_check
    CHECK (kind IN ('confirm_succeeded', 'confirm_not_applied', 'replay', 'supersede'));

-- +goose Down
DELETE FROM resolutions WHERE kind = 'supersede';
ALTER TABLE resolutions DROP CONSTRAINT resolutions_kind_check;
ALTER TABLE resolutions ADD CONSTRAINT resolutions_kind_check
    CHECK (kind IN ('confirm_succeeded', 'confirm_not_applied', 'replay'));
