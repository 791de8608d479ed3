package target

import (
	"reflect"
	"strings"
	"testing"
)

// Each rule by itself, with the kinds that the evidence records instead of
// the values.
func TestContract_MatchRules(t *testing.T) {
	t.Parallel()
	c := parseOne(t, `    response:
      id_field: id
      match:
        - {field: amount, rule: numeric}
        - {field: currency, rule: case_insensitive}
        - description
`, "response")
	const approved = `{"amount":1000,"currency":"EUR","description":"Winter boots"}`
	tests := []struct {
		name, remote string
		want         []Mismatch
	}{
		{"identical", approved, nil},
		{"numeric: decimal number", `{"amount":1000.00,"currency":"EUR","description":"Winter boots"}`, nil},
		{"numeric: numeric string", `{"amount":"1000.0","currency":"EUR","description":"Winter boots"}`, nil},
		{"numeric: exponent", `{"amount":"1e3","currency":"EUR","description":"Winter boots"}`, nil},
		{"numeric: no float rounding", `{"amount":"1000.0000000000000000001","currency":"EUR","description":"Winter boots"}`,
			[]Mismatch{{"amount", "number vs string"}}},
		{"numeric: other value", `{"amount":1001,"currency":"EUR","description":"Winter boots"}`, []Mismatch{{"amount", "number vs number"}}},
		{"numeric: text", `{"amount":"ten","currency":"EUR","description":"Winter boots"}`, []Mismatch{{"amount", "number vs string"}}},
		{"numeric: padded string", `{"amount":" 1000","currency":"EUR","description":"Winter boots"}`, []Mismatch{{"amount", "number vs string"}}},
		{"numeric: huge exponent is never computed", `{"amount":"1e999999999","currency":"EUR","description":"Winter boots"}`, []Mismatch{{"amount", "number vs string"}}},
		{"numeric: boolean", `{"amount":true,"currency":"EUR","description":"Winter boots"}`, []Mismatch{{"amount", "number vs boolean"}}},
		{"case_insensitive: lower case", `{"amount":1000,"currency":"eur","description":"Winter boots"}`, nil},
		{"case_insensitive: other code", `{"amount":1000,"currency":"usd","description":"Winter boots"}`, []Mismatch{{"currency", "string vs string"}}},
		{"case_insensitive: a number is compared exactly", `{"amount":1000,"currency":978,"description":"Winter boots"}`, []Mismatch{{"currency", "string vs number"}}},
		{"exact: case counts", `{"amount":1000,"currency":"EUR","description":"winter boots"}`, []Mismatch{{"description", "string vs string"}}},
		{"missing and null", `{"amount":null,"currency":"EUR"}`, []Mismatch{{"amount", "number vs null"}, {"description", "string vs missing"}}},
		{"object and array", `{"amount":{"v":1},"currency":["EUR"],"description":"Winter boots"}`,
			[]Mismatch{{"amount", "number vs object"}, {"currency", "string vs array"}}},
		{"not JSON", `<html>`, []Mismatch{{"amount", "number vs not JSON"}, {"currency", "string vs not JSON"}, {"description", "string vs not JSON"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Mismatches([]byte(approved), []byte(tt.remote))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Mismatches = %q; want %q", got, tt.want)
			}
			for _, m := range got {
				for _, v := range []string{"1000", "EUR", "eur", "Winter", "usd", "ten"} {
					if strings.Contains(m.Kinds, v) {
						t.Errorf("kinds %q quote a value", m.Kinds)
					}
				}
			}
		})
	}
	// The approved side may itself hold a numeric string.
	if got := c.Mismatches([]byte(`{"amount":"10.50","currency":"x","description":"d"}`), []byte(`{"amount":10.5,"currency":"X","description":"d"}`)); got != nil {
		t.Errorf("approved numeric string: Mismatches = %q", got)
	}
	ms := []Mismatch{{"amount", "number vs string"}, {"currency", "string vs number"}}
	if f, k := MismatchFields(ms), MismatchKinds(ms); !reflect.DeepEqual(f, []string{"amount", "currency"}) ||
		!reflect.DeepEqual(k, map[string]string{"amount": "number vs string", "currency": "string vs number"}) {
		t.Errorf("MismatchFields = %q, MismatchKinds = %q", f, k)
	}
	if MismatchFields(nil) != nil {
		t.Error("MismatchFields(nil) is not nil")
	}
	// A rule left empty (a Contract built in code) compares exactly.
	built := &Contract{Response: Response{Match: []MatchField{{Field: "currency"}}}}
	if got := built.Mismatches([]byte(`{"currency":"EUR"}`), []byte(`{"currency":"eur"}`)); len(got) != 1 {
		t.Errorf("empty rule: Mismatches = %q; want exact", got)
	}
}
