package ledger

import (
	"strconv"
	"strings"

	"github.com/gowebpki/jcs"
)

// RFC 8785 writes every number as the IEEE-754 double nearest to it, so a
// number with more precision than a double keeps, or one beyond a double's
// range, would be stored, hashed and sent as a different amount than the
// one approved. The ledger refuses such numbers instead of changing them.

// NumberProblem says why the JSON number literal n cannot be kept exactly
// by canonicalisation, or returns "" when its canonical form has the same
// exact decimal value (1.0, 1e2 and 100 are all exact). It compares exact
// decimal values digit by digit, never through a float, and n must already
// match the JSON number grammar.
func NumberProblem(n string) string {
	lit, ok := parseDecimal(n)
	f, err := strconv.ParseFloat(n, 64)
	switch {
	case lit.digits == "" && ok:
		return "" // 0, -0, 0.0, 0e99: canonical 0
	case err != nil:
		return "is beyond the range of an IEEE-754 double"
	case f == 0:
		return "is too small for an IEEE-754 double and would become 0"
	case !ok:
		return "is beyond the range of an IEEE-754 double"
	}
	canon, err := jcs.NumberToJSON(f)
	if err != nil {
		return "is beyond the range of an IEEE-754 double"
	}
	if c, _ := parseDecimal(canon); c != lit {
		return "has more precision than an IEEE-754 double keeps and would be rounded"
	}
	return ""
}

// ExactNumber reports whether the JSON number literal n survives RFC 8785
// canonicalisation with its exact value (see NumberProblem).
func ExactNumber(n string) bool { return NumberProblem(n) == "" }

// decimal is an exact value: digits × 10^exp with no leading or trailing
// zeros in digits, so that equal values have equal representations. Zero
// has no digits (and no sign).
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExp bounds exponents well beyond any double (about 10^±324) and any
// request body, so the arithmetic below cannot overflow.
const maxExp = 1 << 40

// parseDecimal reads a JSON number literal (the grammar of RFC 8259, plus
// the '+' exponent sign that canonical forms use). A zero mantissa is zero
// whatever its exponent. ok is false for a non-zero mantissa with an
// exponent so large that the value can only underflow or overflow.
func parseDecimal(n string) (d decimal, ok bool) {
	if strings.HasPrefix(n, "-") {
		d.neg, n = true, n[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(n), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return decimal{}, true
	}
	if hasExp {
		e, err := strconv.ParseInt(strings.TrimPrefix(expPart, "+"), 10, 64)
		if err != nil || e > maxExp || e < -maxExp {
			return d, false
		}
		d.exp = e
	}
	d.exp -= int64(len(frac))
	d.digits = strings.TrimRight(digits, "0")
	d.exp += int64(len(digits) - len(d.digits))
	return d, true
}
