package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// FormEncode derives application/x-www-form-urlencoded bytes from a JSON
// object in bracket notation, as Stripe's v1 API and Rack-style servers
// read it:
//
//   - a nested object's fields are name[field]=…, arrays name[0]=…, at any
//     depth (items[0][price]=…);
//   - strings are sent as they are, numbers exactly as written in the JSON,
//     booleans as true and false;
//   - a null is left out: a form has no null, and an empty value tells such
//     APIs to clear a field, which the JSON did not say;
//   - an empty object or array sends nothing, for the same reason;
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
		for i := 0; w.dec.More(); i++ {
			if err := w.value(name + "[" + strconv.Itoa(i) + "]"); err != nil {
				return err
			}
		}
		_, err := w.dec.Token() // ']'
		return err
	case string:
		w.pair(name, t)
	case json.Number:
		w.pair(name, t.String())
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
