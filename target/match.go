package target

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strings"

	"settle/ledger"
)

// Mismatch is one response.match field on which the approved payload and a
// remote object disagree. It names the field and the kinds of the two
// values, never the values: payloads and remote objects hold personal and
// financial data, and evidence is shown to people and kept.
type Mismatch struct {
	Field string
	// Kinds is "<approved kind> vs <remote kind>", each one of string,
	// number, boolean, null, object, array, missing or "not JSON", e.g.
	// "string vs number"; "string vs string" means the values differ.
	Kinds string
}

// Mismatches compares every response.match field of the approved payload
// with the remote object, each by its rule, and returns those that differ,
// in contract order; nil means they all agree. A field absent on either
// side differs, and so does every field when either document is not valid
// JSON.
//
// MatchExact compares numbers by exact value (10 equals 10.0); a number an
// IEEE-754 double cannot hold exactly never equals anything (see
// ledger.NumberProblem); all else compares by JSON equality.
// MatchCaseInsensitive compares two strings with strings.EqualFold and
// anything else exactly. MatchNumeric compares JSON numbers and numeric
// strings as exact decimals (1, 1.0 and "1.00" agree; no float rounding).
func (c *Contract) Mismatches(approved, remote []byte) []Mismatch {
	a, errA := decodeJSON(approved)
	r, errR := decodeJSON(remote)
	var diff []Mismatch
	for _, m := range c.Response.Match {
		var va, vr any
		okA, okR := false, false
		if errA == nil {
			va, okA = get(a, m.Field)
		}
		if errR == nil {
			vr, okR = get(r, m.Field)
		}
		if okA && okR && m.Rule.equal(va, vr) {
			continue
		}
		diff = append(diff, Mismatch{Field: m.Field, Kinds: kindOf(va, okA, errA) + " vs " + kindOf(vr, okR, errR)})
	}
	return diff
}

// MismatchFields returns the fields of ms, in order.
func MismatchFields(ms []Mismatch) []string {
	if len(ms) == 0 {
		return nil
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Field
	}
	return out
}

// MismatchKinds returns field → kinds of ms, for evidence.
func MismatchKinds(ms []Mismatch) map[string]string {
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		out[m.Field] = m.Kinds
	}
	return out
}

func kindOf(v any, present bool, docErr error) string {
	switch {
	case docErr != nil:
		return "not JSON"
	case !present:
		return "missing"
	}
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func (rule MatchRule) equal(a, b any) bool {
	switch rule {
	case MatchCaseInsensitive:
		sa, okA := a.(string)
		sb, okB := b.(string)
		if okA && okB {
			return strings.EqualFold(sa, sb)
		}
	case MatchNumeric:
		da, okA := decimal(a)
		db, okB := decimal(b)
		return okA && okB && da.Cmp(db) == 0
	}
	return equalJSON(a, b)
}

// decimalRe is a JSON number with an exponent of at most three digits:
// big.Rat would build 10^exponent, so a remote "1e999999999" must not
// reach it.
var decimalRe = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]{1,3})?$`)

// decimal reads a JSON number, or a string holding one, as an exact
// rational.
func decimal(v any) (*big.Rat, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return nil, false
	}
	if len(s) > 64 || !decimalRe.MatchString(s) {
		return nil, false
	}
	return new(big.Rat).SetString(s)
}

func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !equalJSON(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		// The approved side is canonical, so it holds a double exactly. A
		// number a double cannot hold exactly (beyond 2^53, too many
		// digits, underflow, overflow) is not the approved amount, however
		// it is written. Between exact numbers, equal doubles are equal
		// decimal values, so no rounding can make two amounts look equal.
		if !ledger.ExactNumber(a.String()) || !ledger.ExactNumber(b.String()) {
			return false
		}
		fa, errA := a.Float64()
		fb, errB := b.Float64()
		return errA == nil && errB == nil && fa == fb
	default: // string, bool, nil
		return a == b
	}
}
