package target

import (
	"reflect"
	"strings"
	"testing"
)

// replace returns base with old replaced by new once, and extra appended.
func replace(old, new, extra string) string {
	if !strings.Contains(base, old) {
		panic("base has no " + old)
	}
	return strings.Replace(base, old, new, 1) + extra
}

// Every validation rule, each asserting the exact "file:line: field:
// message" lines. Lines appended to base start at line 9.
func TestParse_Errors(t *testing.T) {
	all := strings.Join(targetFields, ", ")
	second := strings.Replace(strings.TrimPrefix(base, "targets:\n"), "name: t1", "name: T1", 1)
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		// The file as a whole.
		{"empty file", "", []string{"c.yaml: the file is empty; it needs a targets list"}},
		{"only a comment", "# nothing yet\n", []string{"c.yaml: the file is empty; it needs a targets list"}},
		{"two documents", base + "---\ntargets: []\n", []string{"c.yaml:10: holds more than one YAML document; put every target in one targets list"}},
		{"top level is a list", "- payments\n", []string{"c.yaml:1: must be a mapping with the fields targets, not a list"}},
		{"unknown top-level field", "target:\n  - name: t1\n", []string{
			"c.yaml:1: target: unknown field (allowed here: targets)",
			"c.yaml:1: targets: required"}},
		{"no targets", "targets: []\n", []string{"c.yaml:1: targets: needs at least one target"}},
		{"targets not a list", "targets: {name: t1}\n", []string{"c.yaml:1: targets: must be a list, not a mapping"}},
		{"target not a mapping", "targets:\n  - payments\n", []string{"c.yaml:2: targets[0]: must be a mapping with the fields " + all + ", not a single value"}},
		{"unknown target field", edit("    timeuot: 5s\n"), []string{"c.yaml:9: targets[0].timeuot: unknown field (allowed here: " + all + ")"}},
		{"unknown nested field", edit("    idempotency:\n      header: Idempotency-Key\n      retension: 24h\n"), []string{
			"c.yaml:11: targets[0].idempotency.retension: unknown field (allowed here: header, scope, retention, mismatch, concurrent, replay_margin, replayed_header)"}},
		{"empty value", edit("    lookup:\n"), []string{"c.yaml:9: targets[0].lookup: is empty; give a value or remove the field"}},
		{"anchor", replace("owner: {", "owner: &o {", ""), []string{"c.yaml:3: targets[0].owner: anchors, aliases and tags are not supported; write the value out"}},
		{"tag", edit("    timeout: !!str 10s\n"), []string{"c.yaml:9: targets[0].timeout: anchors, aliases and tags are not supported; write the value out"}},
		{"merge key", edit("    <<: {timeout: 5s}\n"), []string{"c.yaml:9: targets[0]: merge keys (<<) are not supported; write the fields out"}},

		// name
		{"name missing", replace("name: t1", "nome: t1", ""), []string{
			"c.yaml:2: targets[0].nome: unknown field (allowed here: " + all + ")",
			"c.yaml:2: targets[0].name: required"}},
		{"name invalid", replace("name: t1", "name: ../x", ""), []string{
			`c.yaml:2: targets[0].name: "../x" is not a valid name (1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)`}},
		{"name not text", replace("name: t1", "name: 42", ""), []string{"c.yaml:2: targets[0].name: must be text (quote it)"}},
		{"duplicate name ignoring case", base + second, []string{"c.yaml:9: targets[1].name: duplicate name; targets[0] on line 2 already uses it"}},

		// owner and documentation (control 1)
		{"owner missing", edit("", "owner"), []string{"c.yaml:2: targets[0].owner: required"}},
		{"owner contact missing", replace("owner: {team: T, escalation_contact: t@example.com}", "owner: {team: T}", ""), []string{
			"c.yaml:3: targets[0].owner.escalation_contact: required"}},
		{"owner notify wrong", replace("owner: {team: T, escalation_contact: t@example.com}",
			`owner: {team: T, escalation_contact: t@example.com, notify: {url: "ftp://x", secret_env: "whsec_abc", format: teams, to: x}}`, ""), []string{
			"c.yaml:3: targets[0].owner.notify.to: unknown field (allowed here: url, secret_env, format)",
			"c.yaml:3: targets[0].owner.notify.url: must be an absolute http or https URL without user info",
			`c.yaml:3: targets[0].owner.notify.format: "teams" is not one of settle, slack`,
			"c.yaml:3: targets[0].owner.notify.secret_env: must name an environment variable (A-Z, 0-9, _), never hold the secret itself"}},
		{"owner notify secret_env missing", replace("owner: {team: T, escalation_contact: t@example.com}",
			`owner: {team: T, escalation_contact: t@example.com, notify: {url: "https://hooks.example.com/x"}}`, ""), []string{
			"c.yaml:3: targets[0].owner.notify.secret_env: required"}},
		{"owner team empty", replace("owner: {team: T,", `owner: {team: " ",`, ""), []string{
			"c.yaml:3: targets[0].owner.team: is empty; give a value or remove the field"}},
		{"documentation missing", edit("", "documentation"), []string{"c.yaml:2: targets[0].documentation: required"}},
		{"documentation url and date wrong", replace(`documentation: {url: "https://docs.example.com/t", checked: 2026-11-01}`,
			`documentation: {url: "ftp://docs.example.com/t", checked: 1 Nov 2026}`, ""), []string{
			"c.yaml:4: targets[0].documentation.url: must be an absolute http or https URL without user info",
			`c.yaml:4: targets[0].documentation.checked: "1 Nov 2026" is not a date (use YYYY-MM-DD)`}},
		{"documentation date missing", replace(`, checked: 2026-11-01}`, "}", ""), []string{"c.yaml:4: targets[0].documentation.checked: required"}},

		// base_url, timeout, deadline, create
		{"base_url missing", edit("", "base_url"), []string{"c.yaml:2: targets[0].base_url: required"}},
		{"base_url with credentials", replace("base_url: http://127.0.0.1:9090", `base_url: "https://user:s3cret@api.example.com"`, ""), []string{
			"c.yaml:5: targets[0].base_url: must be an absolute http or https URL without user info, query or fragment"}},
		{"base_url with query", replace("base_url: http://127.0.0.1:9090", `base_url: "http://api.example.com/?v=1"`, ""), []string{
			"c.yaml:5: targets[0].base_url: must be an absolute http or https URL without user info, query or fragment"}},
		{"timeout not a duration", edit("    timeout: ten seconds\n"), []string{`c.yaml:9: targets[0].timeout: "ten seconds" is not a duration (use e.g. 24h)`}},
		{"timeout zero", edit("    timeout: 0s\n"), []string{"c.yaml:9: targets[0].timeout: must be more than 0s and at most 2m0s"}},
		{"timeout too long", edit("    timeout: 3m\n"), []string{"c.yaml:9: targets[0].timeout: must be more than 0s and at most 2m0s"}},
		{"deadline missing", edit("", "deadline"), []string{"c.yaml:2: targets[0].deadline: required"}},
		{"deadline not a duration", replace("deadline: 24h", "deadline: 1 day", ""), []string{`c.yaml:6: targets[0].deadline: "1 day" is not a duration (use e.g. 24h)`}},
		{"deadline within timeout", replace("deadline: 24h", "deadline: 1m", "    timeout: 2m\n"), []string{"c.yaml:6: targets[0].deadline: must be longer than the timeout (2m0s)"}},
		{"create missing", edit("", "create"), []string{"c.yaml:2: targets[0].create: required"}},
		{"create method and placeholder", replace("create: {method: POST, path: /v1/things}", `create: {method: GET, path: "/v1/{reference}"}`, ""), []string{
			`c.yaml:7: targets[0].create.method: "GET" is not one of POST, PUT, PATCH, DELETE`,
			"c.yaml:7: targets[0].create.path: takes no placeholders"}},
		{"create path relative", replace("path: /v1/things", "path: v1/things", ""), []string{"c.yaml:7: targets[0].create.path: must start with a single /"}},
		{"create path with space", replace("path: /v1/things", `path: "/v1/some things"`, ""), []string{
			"c.yaml:7: targets[0].create.path: is not a valid URL path (escape spaces; no fragment)"}},

		// reference and tenant fields
		{"reference_field not a path", edit("    reference_field: metadata..ref\n"), []string{
			`c.yaml:9: targets[0].reference_field: "metadata..ref" is not a dotted field path (e.g. metadata.settle_ref)`}},
		{"tenant_field overlaps", replace("match: [amount]", "match: [amount, metadata, metadata.tenant]", "    reference_field: metadata\n    tenant_field: metadata.tenant\n"), []string{
			"c.yaml:10: targets[0].tenant_field: overlaps reference_field; settle writes both, so they must be separate fields"}},

		// idempotency
		{"idempotency header missing", edit("    idempotency: {retention: 24h}\n"), []string{"c.yaml:9: targets[0].idempotency.header: required"}},
		{"idempotency header invalid", edit(`    idempotency: {header: "Idempotency Key"}` + "\n"), []string{
			`c.yaml:9: targets[0].idempotency.header: "Idempotency Key" is not an HTTP header name`}},
		{"retention not a duration", edit("    idempotency: {header: K, retention: 1 day}\n"), []string{
			`c.yaml:9: targets[0].idempotency.retention: "1 day" is not a duration (use e.g. 24h)`}},
		{"retention negative", edit("    idempotency: {header: K, retention: -1h}\n"), []string{"c.yaml:9: targets[0].idempotency.retention: must not be negative"}},
		{"mismatch unknown", edit("    idempotency: {header: K, mismatch: errors}\n"), []string{
			`c.yaml:9: targets[0].idempotency.mismatch: "errors" is not one of rejected, replays_original, undocumented`}},
		{"replay margin zero", edit("    idempotency: {header: K, retention: 24h, replay_margin: 0s}\n"), []string{
			"c.yaml:9: targets[0].idempotency.replay_margin: must be more than 0s and at most 1h0m0s; leave it out for the default 5s"}},
		{"replay margin too long", edit("    idempotency: {header: K, retention: 24h, replay_margin: 2h}\n"), []string{
			"c.yaml:9: targets[0].idempotency.replay_margin: must be more than 0s and at most 1h0m0s; leave it out for the default 5s"}},
		{"concurrent unknown", edit("    idempotency: {header: K, concurrent: queue}\n"), []string{
			`c.yaml:9: targets[0].idempotency.concurrent: "queue" is not one of conflict, waits, undocumented`}},
		{"concurrent conflict without in_progress row", edit("    idempotency: {header: K, concurrent: conflict}\n"), []string{
			"c.yaml:2: targets[0].outcomes: idempotency.concurrent is conflict, so map the status the target returns for it to in_progress"}},

		// lookup
		{"lookup path missing", edit("    lookup: {method: GET}\n"), []string{"c.yaml:9: targets[0].lookup.path: required"}},
		{"lookup method not GET", edit(`    lookup: {method: POST, path: "/x/{remote_ref}"}` + "\n"), []string{`c.yaml:9: targets[0].lookup.method: "POST" is not one of GET`}},
		{"lookup without placeholder", edit("    lookup: {path: /v1/things}\n"), []string{"c.yaml:9: targets[0].lookup.path: must contain {reference} or {remote_ref}"}},
		{"lookup unknown placeholder", edit(`    lookup: {path: "/v1/things/{ref}"}` + "\n"), []string{
			"c.yaml:9: targets[0].lookup.path: may contain only the placeholders {reference} and {remote_ref}"}},
		{"lookup reference never sent", edit(`    lookup: {path: "/v1/things?ref={reference}"}` + "\n"), []string{
			"c.yaml:9: targets[0].lookup.path: uses {reference}, but settle sends the reference only through reference_field or the idempotency header; set one"}},
		{"propagation_limit zero", edit(`    lookup: {path: "/t/{remote_ref}", propagation_limit: 0s}` + "\n"), []string{
			"c.yaml:9: targets[0].lookup.propagation_limit: must be more than 0s; remove it if none is documented, or set read_after_write: true"}},
		{"results_field not a path", edit(`    lookup: {path: "/t/{remote_ref}", results_field: "data[0]"}` + "\n"), []string{
			`c.yaml:9: targets[0].lookup.results_field: "data[0]" is not a dotted field path (e.g. metadata.settle_ref)`}},
		{"read_after_write not a bool", edit(`    lookup: {path: "/t/{remote_ref}", read_after_write: "yes"}` + "\n"), []string{
			"c.yaml:9: targets[0].lookup.read_after_write: must be true or false"}},

		// conditional update, late requests
		{"conditional header missing", edit("    conditional_update: {}\n"), []string{"c.yaml:9: targets[0].conditional_update.header: required"}},
		{"version_field not a path", edit(`    conditional_update: {header: If-Match, version_field: "v[0]"}` + "\n"), []string{
			`c.yaml:9: targets[0].conditional_update.version_field: "v[0]" is not a dotted field path (e.g. metadata.settle_ref)`}},
		{"late_requests_rejected not a bool", edit("    late_requests_rejected: 1\n"), []string{"c.yaml:9: targets[0].late_requests_rejected: must be true or false"}},

		// outcomes
		{"outcomes not a list", edit("    outcomes: {status: 201}\n"), []string{"c.yaml:9: targets[0].outcomes: must be a list, not a mapping"}},
		{"bad outcome rows, all reported", edit(`    outcomes:
      - {status: 4x, outcome: unknown}
      - {status: 600, outcome: unknown}
      - {status: 201, outcome: succeeded}
      - {status: "201", outcome: unknown}
      - {status: 202, outcome: done}
      - {status: 203}
      - {outcome: unknown, note: x}
`), []string{
			`c.yaml:10: targets[0].outcomes[0].status: "4x" is not a status (use a code 200-599 such as 409, or a class 2xx-5xx such as 4xx)`,
			`c.yaml:11: targets[0].outcomes[1].status: "600" is not a status (use a code 200-599 such as 409, or a class 2xx-5xx such as 4xx)`,
			"c.yaml:13: targets[0].outcomes[3].status: 201 is mapped twice (also on line 12)",
			`c.yaml:14: targets[0].outcomes[4].outcome: "done" is not one of succeeded, accepted_pending, rejected_without_side_effect, in_progress, unknown`,
			"c.yaml:15: targets[0].outcomes[5].outcome: required",
			"c.yaml:16: targets[0].outcomes[6].note: unknown field (allowed here: status, outcome, documentation)",
			"c.yaml:16: targets[0].outcomes[6].status: required"}},
		{"rejected needs documentation", edit("    outcomes: [{status: 400, outcome: rejected_without_side_effect}]\n"), []string{
			"c.yaml:9: targets[0].outcomes[0].documentation: required for rejected_without_side_effect: cite where the target documents that 400 happens before any side effect"}},
		{"rejected class needs documentation", edit("    outcomes: [{status: 4XX, outcome: rejected_without_side_effect}]\n"), []string{
			"c.yaml:9: targets[0].outcomes[0].documentation: required for rejected_without_side_effect: cite where the target documents that 4xx happens before any side effect"}},
		{"documentation not a URL", edit(`    outcomes: [{status: 400, outcome: rejected_without_side_effect, documentation: "see the docs"}]` + "\n"), []string{
			"c.yaml:9: targets[0].outcomes[0].documentation: must be an absolute http or https URL without user info"}},
		{"5xx needs documentation", edit("    outcomes: [{status: 5xx, outcome: in_progress}]\n"), []string{
			"c.yaml:9: targets[0].outcomes[0].documentation: required to map 5xx to in_progress: a 5xx is unknown unless the target documents otherwise"}},
		{"503 needs documentation", edit("    outcomes: [{status: 503, outcome: rejected_without_side_effect}]\n"), []string{
			"c.yaml:9: targets[0].outcomes[0].documentation: required for rejected_without_side_effect: cite where the target documents that 503 happens before any side effect"}},
		{"succeeded only for 2xx", edit("    outcomes: [{status: 409, outcome: succeeded}, {status: 3xx, outcome: accepted_pending}]\n"), []string{
			"c.yaml:9: targets[0].outcomes[0].outcome: succeeded is only possible for a 2xx status",
			"c.yaml:9: targets[0].outcomes[1].outcome: accepted_pending is only possible for a 2xx status"}},

		// response
		{"response missing", edit("", "response"), []string{"c.yaml:2: targets[0].response: required"}},
		{"response empty", replace("response: {id_field: id, match: [amount]}", "response: {match: []}", ""), []string{
			"c.yaml:8: targets[0].response.id_field: required",
			"c.yaml:8: targets[0].response.match: needs at least one field; matching nothing would accept any object"}},
		{"match entries", replace("match: [amount]", `match: [amount, amount, "a..b", 5]`, ""), []string{
			"c.yaml:8: targets[0].response.match[1]: amount is listed twice",
			`c.yaml:8: targets[0].response.match[2]: "a..b" is not a dotted field path (e.g. metadata.settle_ref)`,
			"c.yaml:8: targets[0].response.match[3]: must be a dotted field path, or a mapping with field and rule"}},
		{"match must carry reference and tenant", edit("    reference_field: metadata.ref\n    tenant_field: metadata.tenant\n"), []string{
			"c.yaml:8: targets[0].response.match: must include metadata.ref, which settle writes into the payload",
			"c.yaml:8: targets[0].response.match: must include metadata.tenant, which settle writes into the payload"}},

		{"match rules", edit(`    reference_field: ref
    response:
      id_field: id
      match:
        - ref
        - {field: amount, rule: fuzzy}
        - {field: currency, rule: case_insensitive, note: x}
        - {rule: numeric}
        - {field: ref, rule: exact}
        - [a]
`, "response"), []string{
			`c.yaml:13: targets[0].response.match[1].rule: "fuzzy" is not one of exact, case_insensitive, numeric`,
			"c.yaml:14: targets[0].response.match[2].note: unknown field (allowed here: field, rule)",
			"c.yaml:15: targets[0].response.match[3].field: required",
			"c.yaml:16: targets[0].response.match[4]: ref is listed twice",
			"c.yaml:17: targets[0].response.match[5]: must be a dotted field path, or a mapping with field and rule"}},
		{"reference and tenant compare exactly", replace("match: [amount]", "match: [amount, {field: ref, rule: case_insensitive}, {field: tenant, rule: numeric}]",
			"    reference_field: ref\n    tenant_field: tenant\n"), []string{
			"c.yaml:8: targets[0].response.match[1]: ref is written by settle and compares exactly; remove the rule",
			"c.yaml:8: targets[0].response.match[2]: tenant is written by settle and compares exactly; remove the rule",
			"c.yaml:8: targets[0].response.match: must include ref, which settle writes into the payload",
			"c.yaml:8: targets[0].response.match: must include tenant, which settle writes into the payload"}},

		{"status_field not a path", replace("match: [amount]}", `match: [amount], status_field: "a..b", statuses: [{value: ok, outcome: succeeded}]}`, ""), []string{
			`c.yaml:8: targets[0].response.status_field: "a..b" is not a dotted field path (e.g. metadata.settle_ref)`}},
		{"status_field without statuses", replace("match: [amount]}", "match: [amount], status_field: status}", ""), []string{
			"c.yaml:8: targets[0].response.statuses: required with status_field: list the values and what each means (at least one succeeded)"}},
		{"statuses without status_field", replace("match: [amount]}", "match: [amount], statuses: [{value: ok, outcome: succeeded}]}", ""), []string{
			"c.yaml:8: targets[0].response.statuses: needs status_field; set it to the field holding the status, or remove statuses"}},
		{"statuses empty", replace("match: [amount]}", "match: [amount], status_field: status, statuses: []}", ""), []string{
			"c.yaml:8: targets[0].response.statuses: needs at least one value; with none, nothing would ever count as completed"}},
		{"statuses not a list", replace("match: [amount]}", "match: [amount], status_field: status, statuses: ok}", ""), []string{
			"c.yaml:8: targets[0].response.statuses: must be a list, not a single value"}},
		{"error_object_field without a rejected row", replace("match: [amount]}", "match: [amount], error_object_field: error.payment_intent}", ""), []string{
			"c.yaml:8: targets[0].response.error_object_field: is read only in answers mapped rejected_without_side_effect, and outcomes has none"}},
		{"error_object_field not a path", replace("match: [amount]}", `match: [amount], error_object_field: "error..pi"}`, ""), []string{
			`c.yaml:8: targets[0].response.error_object_field: "error..pi" is not a dotted field path (e.g. metadata.settle_ref)`}},
		{"the old succeeded list is gone", replace("match: [amount]}", "match: [amount], status_field: status, succeeded: [ok]}", ""), []string{
			"c.yaml:8: targets[0].response.succeeded: unknown field (allowed here: id_field, match, status_field, statuses, error_object_field)",
			"c.yaml:8: targets[0].response.statuses: required with status_field: list the values and what each means (at least one succeeded)"}},
		{"statuses entries", edit(`    response:
      id_field: id
      match: [amount]
      status_field: status
      statuses:
        - {value: ok, outcome: succeeded}
        - {value: ok, outcome: succeeded}
        - {value: 5, outcome: succeeded}
        - {value: declined, outcome: failed}
        - {value: waiting, outcome: pending}
        - {value: x, outcome: done, documentation: "https://docs.example.com/s"}
        - {outcome: succeeded}
        - {value: y, outcome: failed, documentation: "see the docs"}
`, "response"), []string{
			"c.yaml:14: targets[0].response.statuses[1].value: ok is listed twice",
			"c.yaml:15: targets[0].response.statuses[2].value: must be text (quote it)",
			"c.yaml:16: targets[0].response.statuses[3].documentation: required for failed: cite where the target documents what declined means",
			"c.yaml:17: targets[0].response.statuses[4].documentation: required for pending: cite where the target documents what waiting means",
			`c.yaml:18: targets[0].response.statuses[5].outcome: "done" is not one of succeeded, pending, failed`,
			"c.yaml:19: targets[0].response.statuses[6].value: required",
			"c.yaml:20: targets[0].response.statuses[7].documentation: must be an absolute http or https URL without user info"}},
		{"statuses without a succeeded value", replace("match: [amount]}",
			`match: [amount], status_field: status, statuses: [{value: declined, outcome: failed, documentation: "https://docs.example.com/s"}]}`, ""), []string{
			"c.yaml:8: targets[0].response.statuses: needs at least one value with outcome succeeded; with none, nothing would ever count as completed"}},

		// auth, encoding, headers, body_fields
		{"auth header missing", edit("    auth: {secret_env: K}\n"), []string{"c.yaml:9: targets[0].auth.header: required"}},
		{"auth secret_env missing", edit("    auth: {header: X-Api-Key}\n"), []string{"c.yaml:9: targets[0].auth.secret_env: required"}},
		{"auth header and scheme wrong", edit(`    auth: {header: "Api Key", scheme: Token, secret_env: K, value: x}` + "\n"), []string{
			"c.yaml:9: targets[0].auth.value: unknown field (allowed here: header, scheme, secret_env)",
			`c.yaml:9: targets[0].auth.header: "Api Key" is not an HTTP header name`,
			`c.yaml:9: targets[0].auth.scheme: "Token" is not one of Bearer, Basic`}},
		{"auth secret pasted in", edit("    auth: {header: Authorization, scheme: Bearer, secret_env: sk_live_51HxAbC}\n"), []string{
			"c.yaml:9: targets[0].auth.secret_env: must name an environment variable (A-Z, 0-9, _), never hold the secret itself"}},
		{"encoding unknown", edit("    encoding: xml\n"), []string{`c.yaml:9: targets[0].encoding: "xml" is not one of json, form`}},
		{"headers not a mapping", edit("    headers: [Stripe-Account]\n"), []string{"c.yaml:9: targets[0].headers: must be a mapping, not a list"}},
		{"headers", edit(`    auth: {header: X-Api-Key, secret_env: K}
    idempotency: {header: Idempotency-Key}
    conditional_update: {header: If-Match}
    headers:
      Content-Type: application/xml
      x-api-key: "{tenant.key}"
      idempotency-key: x
      If-Match: x
      Authorization: "Bearer sk_live_51HxAbC"
      "Bad Header": x
      Stripe-Account: "{tenant.Account}"
      Stripe-Version: 2024
      X-Empty: ""
      stripe-account: "{tenant.account}"
      X-Ok: "{tenant.account}"
      x-ok: "again"
      X-List: [a]
      Connection: keep-alive
      X-Line: "a\nb"
`), []string{
			"c.yaml:13: targets[0].headers.Content-Type: cannot be set here: settle sets it from encoding",
			"c.yaml:14: targets[0].headers.x-api-key: cannot be set here: auth.header sends the credential there",
			"c.yaml:15: targets[0].headers.idempotency-key: cannot be set here: idempotency.header carries the operation's key there",
			"c.yaml:16: targets[0].headers.If-Match: cannot be set here: conditional_update.header carries the expected version there",
			"c.yaml:17: targets[0].headers.Authorization: cannot be set here: credentials belong in auth, whose secret_env keeps the secret out of this file",
			"c.yaml:18: targets[0].headers.Bad Header: is not an HTTP header name",
			"c.yaml:19: targets[0].headers.Stripe-Account: may contain only {tenant.NAME} placeholders (NAME: a-z, 0-9 and _, starting with a letter, at most 32), and no other braces",
			"c.yaml:20: targets[0].headers.Stripe-Version: must be text (quote it)",
			"c.yaml:21: targets[0].headers.X-Empty: is empty; give a value or remove the field",
			"c.yaml:22: targets[0].headers.stripe-account: is listed twice (header names ignore case)",
			"c.yaml:24: targets[0].headers.x-ok: is listed twice (header names ignore case)",
			"c.yaml:25: targets[0].headers.X-List: must be a single value, not a list",
			"c.yaml:26: targets[0].headers.Connection: cannot be set here: it changes how the request travels, which settle controls so that nothing is sent twice",
			"c.yaml:27: targets[0].headers.X-Line: holds a control character, which no header value may carry"}},
		{"body_fields", edit(`    reference_field: metadata.ref
    tenant_field: metadata.tenant
    conditional_update: {header: If-Match, version_field: version}
    response: {id_field: id, match: [amount, metadata.ref, metadata.tenant]}
    body_fields:
      metadata: "{tenant.x}"
      metadata.tenant.sub: x
      version: x
      amount.value: x
      "a..b": x
      transfer.destination: "{tenant.destination}"
      transfer: x
      other: 5
      note: "{tenant.}"
`, "response"), []string{
			"c.yaml:13: targets[0].body_fields.metadata: overlaps metadata.ref (reference_field)",
			"c.yaml:14: targets[0].body_fields.metadata.tenant.sub: overlaps metadata.tenant (tenant_field)",
			"c.yaml:15: targets[0].body_fields.version: overlaps version (conditional_update.version_field)",
			"c.yaml:16: targets[0].body_fields.amount.value: overlaps amount (response.match, which compares with the approved payload)",
			"c.yaml:17: targets[0].body_fields.a..b: is not a dotted field path (e.g. transfer_data.destination)",
			"c.yaml:19: targets[0].body_fields.transfer: overlaps transfer.destination (another body field)",
			"c.yaml:20: targets[0].body_fields.other: must be text (quote it)",
			"c.yaml:21: targets[0].body_fields.note: may contain only {tenant.NAME} placeholders (NAME: a-z, 0-9 and _, starting with a letter, at most 32), and no other braces"}},
		{"replayed_header invalid", edit(`    idempotency: {header: K, replayed_header: "Idempotent Replayed"}` + "\n"), []string{
			`c.yaml:9: targets[0].idempotency.replayed_header: "Idempotent Replayed" is not an HTTP header name`}},
		{"lookup query with a bad escape", edit(`    reference_field: ref
    lookup: {path: "/v1/x/search?query=%zz'{reference}'"}
    response: {id_field: id, match: [amount, ref]}
`, "response"), []string{"c.yaml:9: targets[0].lookup.path: the query holds an invalid %-escape (write %25 for a literal %)"}},
		{"lookup placeholder in a query name", edit(`    reference_field: ref
    lookup: {path: "/v1/x?{reference}=1"}
    response: {id_field: id, match: [amount, ref]}
`, "response"), []string{"c.yaml:9: targets[0].lookup.path: placeholders go in query values (name={reference}), not in names"}},

		// webhook
		{"webhook secret_env missing", edit("    webhook: {tolerance: 5m}\n"), []string{"c.yaml:9: targets[0].webhook.secret_env: required"}},
		{"webhook secret pasted in", edit("    webhook: {secret_env: whsec_9f8e7d6c5b4a}\n"), []string{
			"c.yaml:9: targets[0].webhook.secret_env: must name an environment variable (A-Z, 0-9, _), never hold the secret itself"}},
		{"webhook tolerance", edit("    webhook: {secret_env: X, tolerance: 2h}\n"), []string{
			"c.yaml:9: targets[0].webhook.tolerance: must be more than 0s and at most 1h0m0s"}},
		{"webhook body limit above the server's", edit("    webhook: {secret_env: X, max_body_bytes: 1048577}\n"), []string{
			"c.yaml:9: targets[0].webhook.max_body_bytes: must be a whole number of bytes from 1 to 1048576"}},
		{"webhook body limit not a number", edit("    webhook: {secret_env: X, max_body_bytes: 64KiB}\n"), []string{
			"c.yaml:9: targets[0].webhook.max_body_bytes: must be a whole number of bytes from 1 to 1048576"}},

		// reconcile
		{"reconcile concurrency zero", edit("    reconcile: {concurrency: 0}\n"), []string{
			"c.yaml:9: targets[0].reconcile.concurrency: must be a whole number from 1 to 256; leave it out for the default 4"}},
		{"reconcile concurrency not a number", edit("    reconcile: {concurrency: many}\n"), []string{
			"c.yaml:9: targets[0].reconcile.concurrency: must be a whole number from 1 to 256; leave it out for the default 4"}},
		{"reconcile unknown field", edit("    reconcile: {concurency: 2}\n"), []string{
			"c.yaml:9: targets[0].reconcile.concurency: unknown field (allowed here: concurrency)"}},

		// Problems in several targets are all reported.
		{"errors in two targets", replace("deadline: 24h", "deadline: 1 day", strings.Replace(second, "name: T1", "name: t2", 1)+"    timeout: 1 min\n"), []string{
			`c.yaml:6: targets[0].deadline: "1 day" is not a duration (use e.g. 24h)`,
			`c.yaml:16: targets[1].timeout: "1 min" is not a duration (use e.g. 24h)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("c.yaml", []byte(tt.yaml))
			if s != nil {
				t.Error("Parse returned a Set along with errors")
			}
			if got := messages(err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestParse_SyntaxErrors(t *testing.T) {
	tests := []struct{ name, yaml, prefix string }{
		{"unclosed flow", "targets:\n  - name: [\n", "c.yaml:2: not valid YAML: "},
		{"duplicate key", edit("    deadline: 1h\n"), `c.yaml:9: not valid YAML: mapping key "deadline" already defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tt.yaml))
			got := messages(err)
			if len(got) != 1 || !strings.HasPrefix(got[0], tt.prefix) {
				t.Errorf("errors = %q; want one starting %q", got, tt.prefix)
			}
		})
	}
}

// Values that may be secrets or credentials never reach an error message.
func TestParse_ErrorsOmitSecrets(t *testing.T) {
	for _, secret := range []string{"whsec_9f8e7d6c5b4a", "s3cret", "sk_live_51HxAbC", "sk_test_4eC39"} {
		yaml := edit(`    webhook: {secret_env: whsec_9f8e7d6c5b4a}
    auth: {header: X-Api-Key, secret_env: sk_live_51HxAbC}
    headers: {Authorization: "Bearer sk_test_4eC39", X-Key: "sk_test_4eC39{"}
`)
		yaml = strings.Replace(yaml, "http://127.0.0.1:9090", "https://u:s3cret@api.example.com", 1)
		_, err := Parse("c.yaml", []byte(yaml))
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("error %v contains %q", err, secret)
		}
	}
}
