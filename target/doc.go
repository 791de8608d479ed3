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
//	      notify:                          # optional: escalation notices and the daily digest
//	        url: https://hooks.example/x   # required; absolute http(s) URL, never logged
//	        secret_env: PAYMENTS_NOTIFY_SECRET  # required; the variable's name; the key (≥ 32 bytes) is read at start-up
//	        format: settle                 # settle (default) or slack
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
//	      replay_margin: 5s                # default 5s, 0 < margin ≤ 1h
//	      replayed_header: Idempotent-Replayed  # optional; "true" there marks a replayed saved answer
//	    lookup:                            # optional; absent = unresolved operations escalate
//	      method: GET                      # default and only value: GET
//	      path: /v1/charges?ref={reference}   # required; {reference} and/or {remote_ref}; query values
//	                                       # are decoded, filled in and re-encoded (a quote or \ in a
//	                                       # value bound for the query is never sent)
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
//	      match:                           # required, non-empty; must include reference_field and tenant_field
//	        - metadata.settle_ref          # a dotted path: rule exact
//	        - {field: currency, rule: case_insensitive}  # exact (default) | case_insensitive | numeric
//	      status_field: status             # optional; dotted path of the object's status
//	      statuses:                        # required with status_field (only then); ≥ 1 succeeded row
//	        - {value: succeeded, outcome: succeeded}
//	        - {value: failed, outcome: failed, documentation: https://…}  # succeeded | pending | failed;
//	                                       # documentation required unless succeeded; unlisted = pending
//	    webhook:                           # optional
//	      secret_env: SETTLE_PAYMENTS_WEBHOOK_SECRET  # required; the variable's name, never the secret
//	      tolerance: 5m                    # default 5m, 0 < tolerance ≤ 1h
//	      signature_header: Settle-Signature  # default; "t=<unix>,v1=<hex HMAC-SHA256("<t>.<body>")>"
//	      object_field: data               # default; dotted path of the remote object in an event
//	      event_id_field: id               # default; dotted path of the event's id
//	      max_body_bytes: 65536            # default 1048576 (MaxWebhookBody); may only lower it
//	    auth:                              # optional; a credential on every request
//	      header: Authorization            # required
//	      scheme: Bearer                   # Bearer | Basic (secret = user:password, base64-encoded) | none: raw
//	      secret_env: STRIPE_SECRET_KEY    # required; the variable's name, read at start-up (ReadSecrets)
//	    encoding: form                     # json (default) | form (x-www-form-urlencoded, bracket notation)
//	    headers:                           # optional; on every request; values may name {tenant.NAME}
//	      Stripe-Account: "{tenant.account}"
//	    body_fields:                       # optional; written into the create body at send time
//	      transfer_data.destination: "{tenant.destination}"
//	    reconcile:                         # optional
//	      concurrency: 4                   # default 4, 1 ≤ n ≤ 256; lookups and replays in progress at once
//
// Further rules: succeeded and accepted_pending only for 2xx statuses; a
// status appears once; idempotency.concurrent: conflict needs an in_progress
// row; a lookup path with {reference} needs reference_field or an
// idempotency header (otherwise the target never receives the reference);
// reference_field and tenant_field compare exactly; headers may not set
// Content-Type, Content-Length, Host, Authorization, the auth, idempotency
// or conditional-update header, Expect or hop-by-hop headers; a body field
// may not overlap the reference, tenant or version field, a match field or
// another body field; templates hold only {tenant.NAME} placeholders (NAME
// ^[a-z][a-z0-9_]{0,31}$); anchors, aliases, tags and merge keys are
// refused.
//
// Sending: the Client fills every {tenant.NAME} from a ParamSource (the
// ledger's tenant parameters) and the credential from Secrets before a
// request is made. When anything is missing nothing is sent: the Attempt's
// NotSent says why, naming parameters and variables, never values. The
// stored payload and its hash are the approved canonical JSON; CreateBody
// derives the wire bytes from it (body fields, then the encoding), the same
// bytes for every replay. A parameter that selects an account (Stripe's
// Stripe-Account) must not change while the tenant has operations to the
// target that are not final: idempotency keys are unique per account, so a
// replay to the new account would be executed as a new request
// (CONTRACTS.md, "Don't change an account parameter under unfinished
// operations").
//
// Capability classes follow from the facts: A = idempotency header with
// retention > 0 and mismatch rejected; B = a lookup path needing only
// {reference}; C = conditional_update; D = none of them.
package target
