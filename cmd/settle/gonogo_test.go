package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"settle/gonogo"
)

// The first test, with the real binary on both stores: settle
// gonogo is a no-go for a fresh contract from settle sim --print-contract
// (no drill yet, no retention rule), settle drill against the simulator
// passes, and settle gonogo then passes every control (exit 0), in text
// and in JSON.
func TestGonogo_FreshContractFailsUntilDrilled(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T, dir string) string{
		"SQLite":   migratedSQLite,
		"Postgres": func(t *testing.T, _ string) string { return schemaURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, contracts := simWithContract(t, dir)
			url := db(t, dir)
			retention := []string{"--retention-owner", "Data protection team", "--redact-payloads-after", "30d",
				"--delete-operations-after", "400d"}
			gate := func(extra ...string) (int, string, string) {
				t.Helper()
				return settleCmd(t, append([]string{"gonogo", "--contracts", contracts, "--database-url", url}, extra...)...)
			}

			code, out, errOut := gate(retention...)
			if code != 1 || !strings.Contains(out, "target payments: NO-GO (6 of 11 controls failed)") ||
				!strings.Contains(out, "FAIL  #4 Atomic claim — no drill recorded (run: settle drill --target payments)") ||
				!strings.Contains(out, "PASS  #2 Durable operation identity") || !strings.Contains(errOut, "no-go for payments") {
				t.Fatalf("gonogo before the drill: exit %d\n%s%s", code, out, errOut)
			}

			// A payload value the drill must never print or log.
			const canary = "PAYLOAD-CANARY-7f3a"
			payload := filepath.Join(dir, "payload.json")
			if err := os.WriteFile(payload, []byte(`{"amount": 250, "currency": "EUR", "description": "`+canary+`"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut = settleCmd(t, "drill", "--target", "payments", "--contracts", contracts, "--database-url", url,
				"--payload", payload)
			if code != 0 || strings.Count(out, "\nPASS") != 6 || !strings.Contains(out, "N/A (pass)  #6 inbound_unmatched") {
				t.Fatalf("drill: exit %d\n%s%s", code, out, errOut)
			}
			if strings.Contains(out+errOut, canary) {
				t.Fatalf("the drill printed a payload value:\n%s%s", out, errOut)
			}

			code, out, errOut = gate(retention...)
			if code != 0 || !strings.Contains(out, "target payments: GO") || strings.Count(out, "\nPASS  #") != 11 || strings.Contains(out+errOut, canary) ||
				!strings.Contains(out, "PASS  #6 Unknown handling — drill test 1 response_lost passed on") {
				t.Fatalf("gonogo after the drill: exit %d\n%s%s", code, out, errOut)
			}

			// Without a retention rule, control 10 alone says no-go.
			code, out, _ = gate("--format", "json")
			var reports []gonogo.Report
			if err := json.Unmarshal([]byte(out), &reports); err != nil {
				t.Fatalf("gonogo --format json: %v\n%s", err, out)
			}
			if code != 1 || len(reports) != 1 || reports[0].Go || reports[0].Failed() != 1 || reports[0].Controls[9].Pass ||
				!strings.Contains(reports[0].Controls[9].Evidence, "no retention owner") {
				t.Fatalf("gonogo without retention: exit %d, %+v", code, reports)
			}
		})
	}
}

// Usage errors exit 2 with one line naming the problem.
func TestGonogo_Usage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, contracts := simWithContract(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gonogo"}, "--contracts (or SETTLE_CONTRACTS) is required"},
		{[]string{"gonogo", "--contracts", contracts, "--format", "xml"}, "--format must be text or json"},
		{[]string{"gonogo", "--contracts", contracts, "--target", "nope"}, `no target "nope"`},
		{[]string{"gonogo", "--contracts", contracts, "--max-drill-age", "soon"}, "want a whole number of days such as 30d"},
		{[]string{"drill", "--contracts", contracts}, "--target is required"},
		{[]string{"drill", "--contracts", contracts, "--target", "nope"}, `no target "nope"`},
	} {
		code, _, errOut := settleCmd(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("settle %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
