package target

import (
	"bytes"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"settle/ledger"
)

func TestFormEncode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json string
		want       string            // the exact bytes
		decoded    map[string]string // what a form decoder reads back; nil: skip
	}{
		{"flat", `{"amount":1000,"currency":"eur"}`, "amount=1000&currency=eur",
			map[string]string{"amount": "1000", "currency": "eur"}},
		{"nested object", `{"metadata":{"settle_ref":"r-1","settle_tenant":"acme"}}`,
			"metadata%5Bsettle_ref%5D=r-1&metadata%5Bsettle_tenant%5D=acme",
			map[string]string{"metadata[settle_ref]": "r-1", "metadata[settle_tenant]": "acme"}},
		{"array of objects", `{"items":[{"price":"p_1","quantity":2},{"price":"p_2","quantity":1}]}`,
			"items%5B0%5D%5Bprice%5D=p_1&items%5B0%5D%5Bquantity%5D=2&items%5B1%5D%5Bprice%5D=p_2&items%5B1%5D%5Bquantity%5D=1",
			map[string]string{"items[0][price]": "p_1", "items[0][quantity]": "2", "items[1][price]": "p_2", "items[1][quantity]": "1"}},
		{"array of scalars", `{"expand":["customer","invoice"]}`, "expand%5B0%5D=customer&expand%5B1%5D=invoice",
			map[string]string{"expand[0]": "customer", "expand[1]": "invoice"}},
		{"deep", `{"a":{"b":{"c":[[1]]}}}`, "a%5Bb%5D%5Bc%5D%5B0%5D%5B0%5D=1", map[string]string{"a[b][c][0][0]": "1"}},
		{"booleans", `{"capture":false,"confirm":true}`, "capture=false&confirm=true",
			map[string]string{"capture": "false", "confirm": "true"}},
		{"numbers in plain digits", `{"a":-0.5,"b":1e+21,"c":12.25,"d":1e-7}`, "a=-0.5&b=1000000000000000000000&c=12.25&d=0.0000001",
			map[string]string{"a": "-0.5", "b": "1000000000000000000000", "c": "12.25", "d": "0.0000001"}},
		{"null is left out", `{"a":null,"b":"x","c":{"d":null}}`, "b=x", map[string]string{"b": "x"}},
		{"empty object sends nothing", `{"a":{},"c":"x"}`, "c=x", map[string]string{"c": "x"}},
		{"empty array is sent empty, as stripe-go sends it", `{"a":[],"b":{"c":[]},"d":"x"}`, "a=&b%5Bc%5D=&d=x",
			map[string]string{"a": "", "b[c]": "", "d": "x"}},
		{"empty string is sent empty", `{"a":""}`, "a=", map[string]string{"a": ""}},
		{"special characters", `{"d":"50% off & more = yes? +1 /ü 'q' \"dq\"","e":"line\nbreak"}`,
			"d=50%25+off+%26+more+%3D+yes%3F+%2B1+%2F%C3%BC+%27q%27+%22dq%22&e=line%0Abreak",
			map[string]string{"d": `50% off & more = yes? +1 /ü 'q' "dq"`, "e": "line\nbreak"}},
		{"special characters in keys", `{"a b":{"c&d":"1"}}`, "a+b%5Bc%26d%5D=1", map[string]string{"a b[c&d]": "1"}},
		{"empty object", `{}`, "", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FormEncode([]byte(tt.json))
			if err != nil || string(got) != tt.want {
				t.Fatalf("FormEncode = %q, %v; want %q", got, err, tt.want)
			}
			vals, err := url.ParseQuery(string(got))
			if err != nil {
				t.Fatal(err)
			}
			dec := map[string]string{}
			for k, v := range vals {
				if len(v) != 1 {
					t.Errorf("%s sent %d times", k, len(v))
				}
				dec[k] = v[0]
			}
			if !reflect.DeepEqual(dec, tt.decoded) {
				t.Errorf("decoded = %q; want %q", dec, tt.decoded)
			}
		})
	}
}

// The wire bytes are a function of the canonical JSON: the same approved
// payload, however the client wrote it, gives the same bytes every time.
func TestFormEncode_Deterministic(t *testing.T) {
	t.Parallel()
	written := []string{
		`{"metadata":{"z":"1","a":"2"},"amount":1000.0,"items":[{"q":1,"p":"x"}],"currency":"eur","b":true}`,
		`{ "currency" : "eur", "b":true, "items":[{"p":"x","q":1e0}], "amount":1e3, "metadata":{"a":"2","z":"1"} }`,
	}
	var first []byte
	for _, w := range written {
		canonical, _, err := ledger.Canonicalize([]byte(w))
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			got, err := FormEncode(canonical)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = got
			}
			if !bytes.Equal(got, first) {
				t.Fatalf("FormEncode gave %q, earlier %q", got, first)
			}
		}
	}
	// Keys sorted as RFC 8785 sorts them, nesting kept together.
	if want := "amount=1000&b=true&currency=eur&items%5B0%5D%5Bp%5D=x&items%5B0%5D%5Bq%5D=1&metadata%5Ba%5D=2&metadata%5Bz%5D=1"; string(first) != want {
		t.Errorf("bytes = %q; want %q", first, want)
	}
}

// Numbers go on the wire in plain decimal digits, as stripe-go's encoder
// writes them (strconv's 'f' format): canonical JSON writes 1e21 as 1e+21,
// which a form decoder reading an integer parameter would refuse or misread.
func TestFormNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"0": "0", "-0": "-0", "1000": "1000", "12.25": "12.25", "-0.5": "-0.5",
		"1e+21": "1000000000000000000000", "1e21": "1000000000000000000000", "1E21": "1000000000000000000000",
		"-1.5e+21": "-1500000000000000000000", "1.25e+2": "125", "1.5e+1": "15", "1.5e0": "1.5",
		"1e-7": "0.0000001", "-1.5e-7": "-0.00000015", "12.5e-1": "1.25", "100e-2": "1", "0e+5": "0",
		"1.2345e+3": "1234.5", "9.999999999999999e+22": "99999999999999990000000",
		"1.7976931348623157e+308": "17976931348623157" + strings.Repeat("0", 292), "5e-324": "0." + strings.Repeat("0", 323) + "5", "0.05e2": "5",
	} {
		got, err := formNumber(in)
		if err != nil || got != want {
			t.Errorf("formNumber(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"1e+400", "1e-400", "1e999999999999999999999"} {
		if got, err := formNumber(in); err == nil {
			t.Errorf("formNumber(%s) = %q; want an error", in, got)
		}
	}
}

func TestFormEncode_Refuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, json, err string }{
		{"bracket in a key", `{"a[b]":"1"}`, "form encoding: a key at the top level is empty or holds [ or ], which bracket notation cannot carry unambiguously"},
		{"bracket in a nested key", `{"m":{"x]":"1"}}`, "form encoding: a key in m is empty or holds [ or ], which bracket notation cannot carry unambiguously"},
		{"empty key", `{"m":[{"":"1"}]}`, "form encoding: a key in m[0] is empty or holds [ or ], which bracket notation cannot carry unambiguously"},
		{"array", `[1]`, "form encoding: the body is not a JSON object"},
		{"not JSON", `{"a":`, "form encoding: not valid JSON"},
		{"trailing data", `{"a":1} {}`, "form encoding: not valid JSON: data after the object"},
		{"a number too long to write out", `{"m":{"n":[1e400]}}`, "form encoding: the number at m[n][0] has more than 400 digits written out in plain decimal, as a form carries numbers; send it as a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FormEncode([]byte(tt.json))
			if err == nil || err.Error() != tt.err || got != nil {
				t.Errorf("FormEncode = %q, %v; want error %q", got, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), `"1"`) {
				t.Errorf("error %q quotes a value", err)
			}
		})
	}
}

func TestContract_CreateBody(t *testing.T) {
	t.Parallel()
	const payload = `{"amount":1000,"currency":"eur","metadata":{"settle_ref":"r-1","settle_tenant":"acme"}}`
	form := parseOne(t, `    encoding: form
    body_fields:
      transfer_data.destination: "{tenant.destination}"
      metadata.source: "settle for {tenant.account}"
`)
	params := map[string]string{"destination": "acct_dest", "account": "acct_1"}
	ct, body, err := form.CreateBody([]byte(payload), params)
	want := "amount=1000&currency=eur&metadata%5Bsettle_ref%5D=r-1&metadata%5Bsettle_tenant%5D=acme&metadata%5Bsource%5D=settle+for+acct_1&transfer_data%5Bdestination%5D=acct_dest"
	if ct != ContentTypeForm || string(body) != want || err != nil {
		t.Errorf("form CreateBody = %q, %q, %v; want %q", ct, body, err, want)
	}

	// JSON: body fields are written in and the result is canonical again.
	js := parseOne(t, "    body_fields: {transfer_data.destination: \"{tenant.destination}\"}\n")
	ct, body, err = js.CreateBody([]byte(payload), params)
	wantJSON := `{"amount":1000,"currency":"eur","metadata":{"settle_ref":"r-1","settle_tenant":"acme"},"transfer_data":{"destination":"acct_dest"}}`
	if ct != ContentTypeJSON || string(body) != wantJSON || err != nil {
		t.Errorf("json CreateBody = %q, %s, %v; want %s", ct, body, err, wantJSON)
	}
	// No body fields: the approved bytes themselves.
	if ct, body, err := parseOne(t, "").CreateBody([]byte(payload), nil); ct != ContentTypeJSON || string(body) != payload || err != nil {
		t.Errorf("plain CreateBody = %q, %s, %v", ct, body, err)
	}

	for name, tc := range map[string]struct {
		payload string
		params  map[string]string
		err     string
	}{
		"missing parameter":   {payload, map[string]string{"account": "acct_1"}, "body field transfer_data.destination needs the tenant parameter destination"},
		"blank parameter":     {payload, map[string]string{"account": "acct_1", "destination": " "}, "body field transfer_data.destination needs the tenant parameter destination"},
		"payload already set": {`{"transfer_data":{"destination":"acct_other"}}`, params, "body fields: payload.transfer_data.destination is already set, but settle writes a body field (body_fields) there; leave it out of the payload"},
		"parent not an object": {`{"transfer_data":"acct_other"}`, params,
			"body fields: payload.transfer_data is a string, not an object, so settle cannot write a body field (body_fields) at transfer_data.destination; send transfer_data as an object or leave it out"},
		"form cannot carry it": {`{"a[b]":"x"}`, params, "form encoding: a key at the top level is empty or holds [ or ], which bracket notation cannot carry unambiguously"},
	} {
		_, body, err := form.CreateBody([]byte(tc.payload), tc.params)
		if err == nil || err.Error() != tc.err || body != nil {
			t.Errorf("%s: CreateBody = %q, %v; want error %q", name, body, err, tc.err)
		}
		if err != nil && (strings.Contains(err.Error(), "acct_") || strings.Contains(err.Error(), "settle for")) {
			t.Errorf("%s: error %q quotes a value", name, err)
		}
	}
}

// A payload that could never be sent is refused when it is registered.
func TestContract_BindRefusesUnsendable(t *testing.T) {
	t.Parallel()
	c := parseOne(t, `    reference_field: metadata.ref
    encoding: form
    body_fields: {transfer_data.destination: "{tenant.destination}"}
    response: {id_field: id, match: [amount, metadata.ref]}
`, "response")
	for payload, want := range map[string]string{
		`{"amount":1,"transfer_data":{"destination":"x"}}`: "payload.transfer_data.destination is set, but settle writes it at send time from the tenant's parameters (target t1, body_fields); leave it out of the payload",
		`{"amount":1,"transfer_data":[1]}`:                 "payload.transfer_data is an array, not an object, so settle cannot write body field transfer_data.destination at send time (target t1); send it as an object or leave it out",
		`{"amount":1,"x[0]":"y"}`:                          "target t1 takes form-encoded bodies: a key at the top level is empty or holds [ or ], which bracket notation cannot carry unambiguously",
		`{"amount":1e-400}`:                                "target t1 takes form-encoded bodies: the number at amount has more than 400 digits written out in plain decimal, as a form carries numbers; send it as a string",
	} {
		_, err := c.Bind([]byte(payload), "ref-1", "acme")
		if ledger.ErrorCode(err) != ledger.EInvalid || ledger.ErrorMessage(err) != want {
			t.Errorf("Bind(%s) = %v; want EInvalid %q", payload, err, want)
		}
	}
	got, err := c.Bind([]byte(`{"amount":1,"transfer_data":{"amount":5}}`), "ref-1", "acme")
	if err != nil || string(got) != `{"amount":1,"metadata":{"ref":"ref-1"},"transfer_data":{"amount":5}}` {
		t.Errorf("Bind = %s, %v", got, err)
	}
}
