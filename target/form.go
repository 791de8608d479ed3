package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// maxFormDigits bounds a number written out in plain digits. Every float64
// (and so every number of a canonical payload) fits: the largest has 309
// integer digits, the smallest 324 places after the point.
const maxFormDigits = 400

// FormEncode derives application/x-www-form-urlencoded bytes from a JSON
// object in bracket notation, as Stripe's v1 API and Rack-style servers
// read it:
//
//   - a nested object's fields are name[field]=…, arrays name[0]=…, at any
//     depth (items[0][price]=…);
//   - strings are sent as they are, booleans as true and false, numbers by
//     their exact value in plain decimal digits, as stripe-go writes them
//     (1e+21, which canonical JSON writes, goes as 1000000000000000000000;
//     1e-7 as 0.0000001); a number of more than maxFormDigits digits is an
//     error rather than a body of hundreds of zeros;
//   - a null is left out: a form has no null, and an empty value tells such
//     APIs to clear a field, which the JSON did not say;
//   - an empty array is sent as name= , as stripe-go sends an empty slice:
//     the JSON said "no items", which is what an empty value tells Stripe;
//   - an empty object sends nothing, as stripe-go sends an empty map;
//   - names and values are percent-encoded as a form encodes them (space as
//     +, brackets as %5B and %5D, which every form decoder reads back).
//
// Pairs follow the order of the JSON text. Given settle's RFC 8785
// canonical payload, whose keys are sorted, the same payload gives the same
// bytes every time, so every replay sends identical bytes. A key that is
// empty or holds [ or ] cannot be told apart from nesting and is an error,
// as is anything but a JSON object; errors name the place (in bracket
// notation), never a value.
func FormEncode(object []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(object))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New("form encoding: not valid JSON")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("form encoding: the body is not a JSON object")
	}
	w := formWriter{dec: dec}
	if err := w.object(""); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("form encoding: not valid JSON: data after the object")
	}
	return []byte(w.b.String()), nil
}

type formWriter struct {
	dec *json.Decoder
	b   strings.Builder
}

// object writes the fields of an object whose '{' was read.
func (w *formWriter) object(prefix string) error {
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return errors.New("form encoding: not valid JSON")
		}
		key, _ := tok.(string)
		if key == "" || strings.ContainsAny(key, "[]") {
			where := "at the top level"
			if prefix != "" {
				where = "in " + prefix
			}
			return errors.New("form encoding: a key " + where + " is empty or holds [ or ], which bracket notation cannot carry unambiguously")
		}
		name := key
		if prefix != "" {
			name = prefix + "[" + key + "]"
		}
		if err := w.value(name); err != nil {
			return err
		}
	}
	_, err := w.dec.Token() // '}'
	return err
}

func (w *formWriter) value(name string) error {
	tok, err := w.dec.Token()
	if err != nil {
		return errors.New("form encoding: not valid JSON")
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return w.object(name)
		}
		i := 0
		for ; w.dec.More(); i++ {
			if err := w.value(name + "[" + strconv.Itoa(i) + "]"); err != nil {
				return err
			}
		}
		if i == 0 {
			w.pair(name, "") // see FormEncode: an empty array is name=
		}
		_, err := w.dec.Token() // ']'
		return err
	case string:
		w.pair(name, t)
	case json.Number:
		n, err := formNumber(t.String())
		if err != nil {
			return fmt.Errorf("form encoding: the number at %s %w", name, err)
		}
		w.pair(name, n)
	case bool:
		w.pair(name, strconv.FormatBool(t))
	case nil:
		// Left out; see FormEncode.
	}
	return nil
}

func (w *formWriter) pair(name, value string) {
	if w.b.Len() > 0 {
		w.b.WriteByte('&')
	}
	w.b.WriteString(url.QueryEscape(name))
	w.b.WriteByte('=')
	w.b.WriteString(url.QueryEscape(value))
}

// formNumber writes a JSON number's text in plain decimal digits with its
// exact value: a number without an exponent as written, one with an
// exponent by moving the point, never through a float (which would round).
// The error says the result would exceed maxFormDigits digits.
func formNumber(s string) (string, error) {
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if !hasExp {
		return s, nil
	}
	sign := ""
	if strings.HasPrefix(mant, "-") {
		sign, mant = "-", mant[1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	e, err := strconv.Atoi(strings.TrimPrefix(exp, "+"))
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return sign + "0", nil // any zero, whatever its exponent
	}
	// point: where the decimal point falls in digits once the exponent
	// is applied, counted from the first significant digit.
	point := len(intPart) - (len(intPart+frac) - len(digits)) + e
	digits = strings.TrimRight(digits, "0")
	if err != nil || max(point, 1)+max(len(digits)-point, 0) > maxFormDigits {
		return "", fmt.Errorf("has more than %d digits written out in plain decimal, as a form carries numbers; send it as a string", maxFormDigits)
	}
	switch {
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits, nil
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits)), nil
	}
	return sign + digits[:point] + "." + digits[point:], nil
}
