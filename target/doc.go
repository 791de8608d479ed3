// Package target holds settle's target contracts: for each remote API
// ("target"), the facts recorded from the vendor's documentation that decide
// what settle may do with an ambiguous outcome (go/no-go control 1), the
// status → outcome table (control 8), and the helpers the executor and the
// reconciler use to apply them.
//
// A deployment has one YAML file (settle's --contracts flag or
// SETTLE_CONTRACTS), loaded and validated at start-up by Load. Every problem
// is reported, each as "file:line: field: message"; unknown fields are
// errors, so a typo cannot silently drop a safety fact. Facts that are not
// recorded take the safe default: no retention → window zero, no lookup →
// escalate, an unmapped status (any 2xx and 5xx included) → unknown.
//
// The schema (CONTRACTS.md explains each field for a target owner):
//
//	targets:                               # at least one
//	  - name: payments                     # required; [A-Za-z0-9][A-Za-z0-9._-]{0,63}, unique ignoring case
//	    owner:                             # required
//	      team: Payments team              # required; shown to support ("Under review by …")
//	      escalation_contact: payments-oncall@example.com  # required
//	    documentation:                     # required (control 1)
//	      url: https://vendor.example/docs # required; absolute http(s) URL
//	      checked: 2026-11-01              # required; date someone last checked it
//	    base_url: https://api.vendor.example  # required; http(s), no user info, query or fragment
//	    timeout: 10s                       # per request; default 10s, 0 < timeout ≤ 2m
//	    deadline: 24h                      # required; default operation deadline, > timeout
//	    create:                            # required
//	      method: POST                     # required; POST, PUT, PATCH or DELETE
//	      path: /v1/charges                # required; starts with /, no placeholders
//	    reference_field: metadata.settle_ref  # optional; settle writes the remote key here
//	    tenant_field: metadata.settle_tenant  # optional; settle writes the tenant here
//	    idempotency:                       # optional; absent = no key, no replay
//	      header: Idempotency-Key          # required in the block
//	      scope: account                   # optional free text; what keys are unique within
//	      retention: 24h                   # default 0 = window zero
//	      mismatch: rejected               # rejected | replays_original | undocumented (default)
//	      concurrent: conflict             # conflict | waits | undocumented (default)
//	    lookup:                            # optional; absent = unresolved operations escalate
//	      method: GET                      # default and only value: GET
//	      path: /v1/charges?ref={reference}   # required; {reference} and/or {remote_ref}
//	      results_field: data              # optional; "" = the body is the one result
//	      read_after_write: false          # default false
//	      propagation_limit: 30s           # optional, > 0; absent = none documented
//	    conditional_update:                # optional; presence = class C
//	      header: If-Match                 # required in the block
//	      version_field: expected_version  # optional; payload path of the version sent in header
//	    late_requests_rejected: false      # default false
//	    outcomes:                          # optional; unmapped statuses are unknown
//	      - status: 201                    # code 200–599 or class 2xx–5xx; exact beats class
//	        outcome: succeeded             # succeeded | accepted_pending | rejected_without_side_effect | in_progress | unknown
//	        documentation: https://…       # required for rejected_without_side_effect and for 5xx ≠ unknown
//	    response:                          # required
//	      id_field: id                     # required; dotted path of the remote object id
//	      match: [amount, metadata.settle_ref]  # required, non-empty; must include reference_field and tenant_field
//	      status_field: status             # optional; dotted path of the object's status
//	      succeeded: [succeeded]           # required with status_field (only then); values that mean completed
//	    webhook:                           # optional
//	      secret_env: SETTLE_PAYMENTS_WEBHOOK_SECRET  # required; the variable's name, never the secret
//	      tolerance: 5m                    # default 5m, 0 < tolerance ≤ 1h
//	      signature_header: Settle-Signature  # default; "t=<unix>,v1=<hex HMAC-SHA256("<t>.<body>")>"
//	      object_field: data               # default; dotted path of the remote object in an event
//	      event_id_field: id               # default; dotted path of the event's id
//
// Further rules: succeeded and accepted_pending only for 2xx statuses; a
// status appears once; idempotency.concurrent: conflict needs an in_progress
// row; a lookup path with {reference} needs reference_field or an
// idempotency header (otherwise the target never receives the reference);
// anchors, aliases, tags and merge keys are refused.
//
// Capability classes follow from the facts: A = idempotency header with
// retention > 0 and mismatch rejected; B = a lookup path needing only
// {reference}; C = conditional_update; D = none of them.
package target
