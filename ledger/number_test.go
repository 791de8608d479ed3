package ledger_test

import (
	"strings"
	"testing"

	"settle/ledger"
)

func TestNumberProblem(t *testing.T) {
	exact := []string{
		"0", "-0", "0.0", "0e5", "0e99999999999999999999", "1", "-1", "1.0", "1e2", "100", "100.000",
		"1E+2", "0.1", "0.5", "1.5e-7", "9007199254740992", "9007199254740992.0", "-9007199254740992",
		"18014398509481984", "1.5e22", "15000000000000000000000", "1e21", "1e308", "5e-324", "123.456",
		"1.7976931348623157e308", "0.30000000000000004",
	}
	lossy := map[string]string{
		"9007199254740993":                     "precision",
		"-9007199254740993":                    "precision",
		"12345678901234567891":                 "precision",
		"0.10000000000000000001":               "precision",
		"1.000000000000000000001":              "precision",
		"0.1000000000000000055511151231257827": "precision", // float64(0.1) exactly: canonical is 0.1
		"4.9e-324":                             "precision",
		"1e-400":                               "become 0",
		"-1e-400":                              "become 0",
		"1e-99999999999999999999":              "become 0",
		"1e400":                                "range",
		"-1e400":                               "range",
		"1e99999999999999999999":               "range",
	}
	for _, n := range exact {
		if p := ledger.NumberProblem(n); p != "" {
			t.Errorf("NumberProblem(%s) = %q, want exact", n, p)
		}
	}
	for n, want := range lossy {
		if p := ledger.NumberProblem(n); !strings.Contains(p, want) {
			t.Errorf("NumberProblem(%s) = %q, want a problem mentioning %q", n, p, want)
		}
	}
}

// Canonicalisation never changes an amount: an inexact number is refused,
// naming its path and advising a string, never quoting the value.
func TestCanonicalize_RefusesInexactNumbers(t *testing.T) {
	for in, path := range map[string]string{
		`{"amount":9007199254740993}`:                             "payload.amount",
		`{"items":[{"amount":1},{"amount":2},{"amount":1e-400}]}`: "payload.items[2].amount",
		`{"a":{"b":[[0,1e400]]}}`:                                 "payload.a.b[0][1]",
		`{"odd key":{"x":0.10000000000000000001}}`:                `payload["odd key"].x`,
	} {
		_, _, err := ledger.Canonicalize([]byte(in))
		if ledger.ErrorCode(err) != ledger.EInvalid {
			t.Fatalf("Canonicalize(%s) = %v, want invalid", in, err)
		}
		msg := ledger.ErrorMessage(err)
		if !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, "as a JSON string") {
			t.Errorf("Canonicalize(%s): message %q, want it to name %s and advise a string", in, msg, path)
		}
		for _, leak := range []string{"9007199254740993}", "1e-400", "1e400", "0.10000000000000000001"} {
			if strings.Contains(msg, leak) {
				t.Errorf("message %q quotes the payload", msg)
			}
		}
	}
	got, _, err := ledger.Canonicalize([]byte(`{"a":1.0,"b":1e2,"c":100,"d":9007199254740992}`))
	if err != nil || string(got) != `{"a":1,"b":100,"c":100,"d":9007199254740992}` {
		t.Fatalf("exact numbers: %s, %v", got, err)
	}
}

// A duplicate key makes the hash ambiguous (which value was approved?), so
// it is refused by path rather than left to a parser's choice.
func TestCanonicalize_RefusesDuplicateKeys(t *testing.T) {
	for in, path := range map[string]string{
		`{"a":1,"a":1}`:                                 "payload.a",
		`{"m":{"k":1,"x":{},"k":2}}`:                    "payload.m.k",
		`{"items":[{"sku":"a"},{"sku":"a","sku":"b"}]}`: "payload.items[1].sku",
		`{"a\u0062":1,"ab":2}`:                          "payload.ab",
	} {
		_, _, err := ledger.Canonicalize([]byte(in))
		if msg := ledger.ErrorMessage(err); ledger.ErrorCode(err) != ledger.EInvalid || !strings.HasPrefix(msg, path+": duplicate key") {
			t.Errorf("Canonicalize(%s) = %v, want invalid naming %s", in, err, path)
		}
	}
	if _, _, err := ledger.Canonicalize([]byte(`{"a":{"k":1},"b":{"k":1},"A":1}`)); err != nil {
		t.Fatalf("the same key in sibling objects, or in another case: %v", err)
	}
}
