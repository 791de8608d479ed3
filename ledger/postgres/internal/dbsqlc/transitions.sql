-- name: OperationClaim :one
-- The first claim starts the same-key replay window; nothing returns to
-- PREPARED, so every claim is the first, but the window is never moved by
-- a later one.
WITH c AS (
    UPDATE operation_ledger o SET state = 'IN_FLIGHT',
        fence_token = o.fence_token + 1, attempt_count = o.attempt_count + 1,
        lease_expires_at = sqlc.arg(lease_end)::timestamptz, updated_at = sqlc.arg(now)::timestamptz, reason = '',
        last_sent_at = sqlc.arg(now)::timestamptz, first_claimed_at = coalesce(o.first_claimed_at, sqlc.arg(now)::timestamptz),
        retry_window_end = CASE WHEN o.first_claimed_at IS NULL
            THEN sqlc.arg(now)::timestamptz + o.retry_window_micros * interval '1 microsecond'
            ELSE o.retry_window_end END
    WHERE o.tenant_id = @tenant_id AND o.operation_id = CAST(sqlc.arg(operation_id)::text AS uuid)
        -- Written so that no partial index of PREPARED rows matches: the
        -- planner would walk the tenant's PREPARED operations in
        -- operation_ledger_prepared_tenant instead of probing the key.
        AND coalesce(o.state, '') = 'PREPARED' AND o.payload_hash = @payload_hash
    RETURNING o.*
), ev AS (
    INSERT INTO operation_events (tenant_id, operation_id, from_state, to_state, fence_token, actor, reason, evidence, at)
    SELECT c.tenant_id, c.operation_id, 'PREPARED', c.state, c.fence_token, sqlc.arg(actor)::text, sqlc.arg(reason)::text, '{}', c.updated_at
      FROM c
)
SELECT c.tenant_id, c.operation_id::text AS operation_id, c.operation_type, c.intent_ref, c.target, c.payload,
       c.payload_hash, c.remote_key::text AS remote_key, c.state, c.fence_token, c.attempt_count,
       c.lease_expires_at, c.remote_ref, c.retry_window_end, c.deadline, c.next_reconcile_at, c.reason,
       c.created_at, c.updated_at, c.last_sent_at, c.first_claimed_at, c.retry_window_micros
  FROM c;

-- name: OperationClaimBatch :many
-- Claims as OperationClaim up to @max PREPARED operations, fairly across
-- tenants: it walks the tenants that have PREPARED work (a loose scan of
-- operation_ledger_prepared_tenant), reads at most @max of each one's
-- oldest, ranks them within their tenant and locks them rank by rank,
-- oldest first within a rank, skipping rows another claim holds (SKIP
-- LOCKED), so that the next replica takes the next rows and only the
-- rows taken are locked. Each row's lease is its target's in the JSON
-- object @target_leases (target to microseconds), or @default_lease.
WITH RECURSIVE tenants(id) AS (
    SELECT (SELECT t0.tenant_id FROM operation_ledger t0 WHERE t0.state = 'PREPARED' ORDER BY t0.tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT t1.tenant_id FROM operation_ledger t1 WHERE t1.state = 'PREPARED' AND t1.tenant_id > t.id
             ORDER BY t1.tenant_id LIMIT 1)
      FROM tenants t WHERE t.id IS NOT NULL
), ranked AS (
    SELECT d.tenant_id, d.operation_id, d.created_at,
           row_number() OVER (PARTITION BY d.tenant_id ORDER BY d.created_at, d.operation_id) AS tenant_rank
      FROM tenants t CROSS JOIN LATERAL (
           SELECT l.tenant_id, l.operation_id, l.created_at FROM operation_ledger l
            WHERE l.tenant_id = t.id AND l.state = 'PREPARED'
            ORDER BY l.created_at, l.operation_id LIMIT sqlc.arg(max)::int) d
     WHERE t.id IS NOT NULL
), picked AS (
    SELECT p.tenant_id, p.operation_id FROM ranked r
      JOIN operation_ledger p ON p.tenant_id = r.tenant_id AND p.operation_id = r.operation_id
     WHERE p.state = 'PREPARED'
     ORDER BY r.tenant_rank, r.created_at
     LIMIT sqlc.arg(max)::int
       FOR UPDATE OF p SKIP LOCKED
), c AS (
    UPDATE operation_ledger o SET state = 'IN_FLIGHT',
        fence_token = o.fence_token + 1, attempt_count = o.attempt_count + 1,
        lease_expires_at = sqlc.arg(now)::timestamptz + interval '1 microsecond' *
            coalesce((sqlc.arg(target_leases)::jsonb ->> o.target)::bigint, sqlc.arg(default_lease)::bigint),
        updated_at = sqlc.arg(now)::timestamptz, reason = '', last_sent_at = sqlc.arg(now)::timestamptz,
        first_claimed_at = coalesce(o.first_claimed_at, sqlc.arg(now)::timestamptz),
        retry_window_end = CASE WHEN o.first_claimed_at IS NULL
            THEN sqlc.arg(now)::timestamptz + o.retry_window_micros * interval '1 microsecond'
            ELSE o.retry_window_end END
      FROM picked
     WHERE o.tenant_id = picked.tenant_id AND o.operation_id = picked.operation_id AND o.state = 'PREPARED'
    RETURNING o.*
), ev AS (
    INSERT INTO operation_events (tenant_id, operation_id, from_state, to_state, fence_token, actor, reason, evidence, at)
    SELECT c.tenant_id, c.operation_id, 'PREPARED', c.state, c.fence_token, sqlc.arg(actor)::text, sqlc.arg(reason)::text, '{}', c.updated_at
      FROM c
)
SELECT c.tenant_id, c.operation_id::text AS operation_id, c.operation_type, c.intent_ref, c.target, c.payload,
       c.payload_hash, c.remote_key::text AS remote_key, c.state, c.fence_token, c.attempt_count,
       c.lease_expires_at, c.remote_ref, c.retry_window_end, c.deadline, c.next_reconcile_at, c.reason,
       c.created_at, c.updated_at, c.last_sent_at, c.first_claimed_at, c.retry_window_micros
  FROM c ORDER BY c.created_at;

-- name: OperationRecord :many
-- Applies each row of @rows (a JSON array of outcomes) whose operation is
-- still in its from_state at its fence, with its event; queues, in the same
-- statement, the tenant's callback of each state in @callback_states when
-- the tenant has an endpoint (ON CONFLICT: one per state reached), and the
-- owning team's notice of every escalation. @n is the number of rows: the
-- LIMIT tells the planner how few they are (a JSON array's elements are
-- estimated at 100, for which it hashed a whole scan of operation_ledger
-- below some 50,000 operations, a plan that then stuck as the table grew);
-- a generic plan takes a parameter's LIMIT as a few rows, too.
WITH i AS (
    SELECT r.v ->> 'tenant_id' AS tenant_id, (r.v ->> 'operation_id')::uuid AS operation_id,
           (r.v ->> 'fence')::bigint AS fence, r.v ->> 'from_state' AS from_state, r.v ->> 'to_state' AS to_state,
           r.v ->> 'remote_ref' AS remote_ref, (r.v ->> 'next_at')::timestamptz AS next_at,
           r.v ->> 'reason' AS reason, r.v ->> 'actor' AS actor, r.v -> 'evidence' AS evidence,
           (r.v ->> 'sent_at')::timestamptz AS sent_at, (r.v ->> 'end_replay')::bool AS end_replay
      FROM jsonb_array_elements(sqlc.arg(rows)::jsonb) AS r(v)
     LIMIT sqlc.arg(n)::int
), u AS (
    UPDATE operation_ledger o SET state = i.to_state,
        remote_ref = coalesce(nullif(i.remote_ref, ''), o.remote_ref),
        lease_expires_at = NULL, next_reconcile_at = i.next_at, reason = i.reason, updated_at = sqlc.arg(now)::timestamptz,
        last_sent_at = coalesce(i.sent_at, o.last_sent_at),
        retry_window_end = CASE WHEN i.end_replay THEN least(o.retry_window_end, sqlc.arg(now)::timestamptz)
            ELSE o.retry_window_end END
      FROM i
     WHERE o.tenant_id = i.tenant_id AND o.operation_id = i.operation_id
       AND o.state = i.from_state AND o.fence_token = i.fence
    RETURNING o.*
), ev AS (
    INSERT INTO operation_events (tenant_id, operation_id, from_state, to_state, fence_token, actor, reason, evidence, at)
    SELECT u.tenant_id, u.operation_id, i.from_state, u.state, u.fence_token, i.actor, i.reason, i.evidence,
           u.updated_at
      FROM u JOIN i ON i.tenant_id = u.tenant_id AND i.operation_id = u.operation_id
), cb AS (
    INSERT INTO callback_outbox (tenant_id, operation_id, state, fence_token, created_at, next_attempt_at)
    SELECT u.tenant_id, u.operation_id, u.state, u.fence_token, u.updated_at, u.updated_at
      FROM u JOIN tenant_callbacks tc ON tc.tenant_id = u.tenant_id
     WHERE u.state = ANY(sqlc.arg(callback_states)::text[])
    ON CONFLICT (tenant_id, operation_id, state) DO NOTHING
), esc AS (
    INSERT INTO escalation_outbox (tenant_id, operation_id, fence_token, created_at, next_attempt_at)
    SELECT u.tenant_id, u.operation_id, u.fence_token, u.updated_at, u.updated_at
      FROM u WHERE u.state = 'ESCALATED'
    ON CONFLICT (tenant_id, operation_id, fence_token) DO NOTHING
)
SELECT u.tenant_id, u.operation_id::text AS operation_id, u.operation_type, u.intent_ref, u.target, u.payload,
       u.payload_hash, u.remote_key::text AS remote_key, u.state, u.fence_token, u.attempt_count,
       u.lease_expires_at, u.remote_ref, u.retry_window_end, u.deadline, u.next_reconcile_at, u.reason,
       u.created_at, u.updated_at, u.last_sent_at, u.first_claimed_at, u.retry_window_micros
  FROM u;

-- name: OperationSweepExpired :many
-- Moves at most @max IN_FLIGHT operations whose lease ended by @now to
-- UNKNOWN, due at once, skipping rows another statement holds.
WITH picked AS (
    SELECT p.tenant_id, p.operation_id FROM operation_ledger p
     WHERE p.state = 'IN_FLIGHT' AND p.lease_expires_at <= sqlc.arg(now)::timestamptz
     LIMIT @max FOR UPDATE SKIP LOCKED
), u AS (
    UPDATE operation_ledger o SET state = 'UNKNOWN', lease_expires_at = NULL,
        next_reconcile_at = sqlc.arg(now)::timestamptz, reason = sqlc.arg(reason)::text, updated_at = sqlc.arg(now)::timestamptz
      FROM picked
     WHERE o.tenant_id = picked.tenant_id AND o.operation_id = picked.operation_id
       AND o.state = 'IN_FLIGHT' AND o.lease_expires_at <= sqlc.arg(now)::timestamptz
    RETURNING o.*
), ev AS (
    INSERT INTO operation_events (tenant_id, operation_id, from_state, to_state, fence_token, actor, reason, evidence, at)
    SELECT u.tenant_id, u.operation_id, 'IN_FLIGHT', u.state, u.fence_token, sqlc.arg(actor)::text, sqlc.arg(reason)::text, '{}', u.updated_at
      FROM u
)
SELECT u.tenant_id, u.operation_id::text AS operation_id, u.target, u.updated_at FROM u;

-- name: OperationLeaseDue :many
-- Walks the tenants that have UNKNOWN operations (a loose index scan of
-- operation_ledger_unknown_tenant), reads at most @max of each one's
-- oldest due ids, ranks them within their tenant and takes the @max best
-- ranks, locking only those, with SKIP LOCKED. The skipped targets are
-- filtered on the heap row inside the LATERAL, after the index probe.
WITH RECURSIVE tenants(id) AS (
    SELECT min(t0.tenant_id) FROM operation_ledger t0 WHERE t0.state = 'UNKNOWN'
    UNION ALL
    SELECT (SELECT min(t1.tenant_id) FROM operation_ledger t1 WHERE t1.state = 'UNKNOWN' AND t1.tenant_id > t.id)
      FROM tenants t WHERE t.id IS NOT NULL
), due AS (
    SELECT d.tenant_id, d.operation_id, d.next_reconcile_at,
           row_number() OVER (PARTITION BY d.tenant_id ORDER BY d.next_reconcile_at, d.operation_id) AS rank
      FROM tenants t CROSS JOIN LATERAL (
           SELECT l.tenant_id, l.operation_id, l.next_reconcile_at FROM operation_ledger l
            WHERE l.tenant_id = t.id AND l.state = 'UNKNOWN' AND l.next_reconcile_at <= sqlc.arg(now)::timestamptz
              AND l.target <> ALL(sqlc.arg(skip_targets)::text[])
            ORDER BY l.next_reconcile_at, l.operation_id LIMIT sqlc.arg(max)::int) d
     WHERE t.id IS NOT NULL
), picked AS (
    SELECT p.tenant_id, p.operation_id FROM operation_ledger p
     WHERE (p.tenant_id, p.operation_id) IN (
           SELECT due.tenant_id, due.operation_id FROM due ORDER BY due.rank, due.next_reconcile_at
            LIMIT sqlc.arg(max)::int)
       FOR UPDATE SKIP LOCKED
)
UPDATE operation_ledger o SET fence_token = o.fence_token + 1, lease_expires_at = sqlc.arg(lease_end)::timestamptz,
       next_reconcile_at = sqlc.arg(lease_end)::timestamptz, updated_at = sqlc.arg(now)::timestamptz
  FROM picked
 WHERE o.tenant_id = picked.tenant_id AND o.operation_id = picked.operation_id
   AND o.state = 'UNKNOWN' AND o.next_reconcile_at <= sqlc.arg(now)::timestamptz
RETURNING o.tenant_id, o.operation_id::text AS operation_id, o.operation_type, o.intent_ref, o.target, o.payload,
       o.payload_hash, o.remote_key::text AS remote_key, o.state, o.fence_token, o.attempt_count,
       o.lease_expires_at, o.remote_ref, o.retry_window_end, o.deadline, o.next_reconcile_at, o.reason,
       o.created_at, o.updated_at, o.last_sent_at, o.first_claimed_at, o.retry_window_micros;
