package web_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"settle/target"
	"settle/web"
)

// createBody is a create request for intent with the given payload.
func createBody(intent, payload string) string {
	return `{"target":"payments","operation_type":"charge","intent_ref":"` + intent + `","payload":` + payload + `}`
}

// wantMessage checks an error reply and that its message holds every part.
func wantMessage(t *testing.T, r response, status int, code string, parts ...string) {
	t.Helper()
	wantError(t, r, status, code)
	msg, _ := r.json(t)["message"].(string)
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Fatalf("message %q does not contain %q", msg, p)
		}
	}
}

// Item 7 of issue 9: an amount that an IEEE-754 double cannot hold exactly
// is refused with 422 naming its path, never stored rounded; and a retry
// that differs from the stored amount only beyond a double's precision is
// not answered 200.
func TestAPI_ExactNumbers(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{})
		for name, c := range map[string]struct{ payload, path string }{
			"BeyondTwoTo53":  {`{"amount":9007199254740993}`, "payload.amount"},
			"InArray":        {`{"items":[{"amount":1},{"amount":2},{"amount":12345678901234567891}]}`, "payload.items[2].amount"},
			"TooManyDigits":  {`{"rate":0.10000000000000000001}`, "payload.rate"},
			"Underflow":      {`{"fee":1e-400}`, "payload.fee"},
			"Overflow":       {`{"fee":1e400}`, "payload.fee"},
			"NegativeBeyond": {`{"refund":{"amount":-9007199254740993}}`, "payload.refund.amount"},
		} {
			t.Run(name, func(t *testing.T) {
				r := e.post(createBody("lossy-"+name, c.payload))
				wantMessage(t, r, http.StatusUnprocessableEntity, "invalid", c.path+": ", "as a JSON string")
			})
		}
		for name, payload := range map[string]string{
			"IntegerAsDecimal": `{"amount":1.0}`,
			"Exponent":         `{"amount":1e2}`,
			"TwoTo53":          `{"amount":9007199254740992}`,
			"NegativeZero":     `{"amount":-0}`,
			"AsString":         `{"amount":"9007199254740993"}`,
		} {
			t.Run(name, func(t *testing.T) {
				if r := e.post(createBody("exact-"+name, payload)); r.status != http.StatusCreated {
					t.Fatalf("exact number refused: %d %s", r.status, r.body)
				}
			})
		}
		t.Run("ConflictingRetry", func(t *testing.T) {
			if r := e.post(createBody("big", `{"amount":9007199254740992}`)); r.status != http.StatusCreated {
				t.Fatalf("first: %d %s", r.status, r.body)
			}
			r := e.post(createBody("big", `{"amount":9007199254740993}`))
			wantMessage(t, r, http.StatusUnprocessableEntity, "invalid", "payload.amount")
		})
	})
}

// Item 8 of issue 9: the create request's field names are exact. A
// duplicate field (which one would count?) or a field in another case is
// 400, not last-wins or a case-insensitive match; a duplicate key inside the
// payload would make its hash ambiguous and is 422 naming the path.
func TestAPI_StrictFields(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{})
		const rest = `"operation_type":"charge","intent_ref":"strict","payload":{"amount":1}`
		for name, c := range map[string]struct {
			body   string
			status int
			code   string
			parts  []string
		}{
			"DuplicateTarget":   {`{"target":"nowhere","target":"payments",` + rest + `}`, 400, "malformed_request", []string{`duplicate field "target"`}},
			"DuplicatePayload":  {`{"target":"payments","operation_type":"charge","intent_ref":"strict","payload":{"amount":1},"payload":{"amount":2}}`, 400, "malformed_request", []string{`duplicate field "payload"`}},
			"UpperCaseField":    {`{"TARGET":"payments",` + rest + `}`, 400, "malformed_request", []string{`"TARGET"`, "case"}},
			"MixedCaseField":    {`{"target":"payments","operation_type":"charge","intent_ref":"strict","Payload":{"amount":1}}`, 400, "malformed_request", []string{`"Payload"`, "case"}},
			"BothCases":         {`{"target":"payments","Target":"nowhere",` + rest + `}`, 400, "malformed_request", []string{`"Target"`}},
			"UnknownField":      {`{"target":"payments","tenant":"globex",` + rest + `}`, 400, "malformed_request", []string{`unknown field "tenant"`}},
			"WrongType":         {`{"target":5,` + rest + `}`, 400, "malformed_request", []string{`"target"`, "string"}},
			"PayloadDuplicate":  {createBody("strict", `{"amount":1,"metadata":{"k":1,"k":2}}`), 422, "invalid", []string{"payload.metadata.k: ", "duplicate key"}},
			"PayloadDupInArray": {createBody("strict", `{"items":[{},{"sku":"a","sku":"a"}]}`), 422, "invalid", []string{"payload.items[1].sku: "}},
		} {
			t.Run(name, func(t *testing.T) {
				wantMessage(t, e.post(c.body), c.status, c.code, c.parts...)
			})
		}
		// Same keys in different case inside the payload are different keys.
		if r := e.post(createBody("cased-keys", `{"amount":1,"Amount":2}`)); r.status != http.StatusCreated {
			t.Fatalf("payload keys differing in case: %d %s", r.status, r.body)
		}
	})
}

// Item 9 of issue 9: intent_ref and operation_type are text a person can
// read — valid UTF-8 (not silently repaired to U+FFFD), NFC, no control or
// format characters, limits counted in characters — or 422 naming the field.
func TestAPI_ReferenceText(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{})
		body := func(opType, intent string) string {
			return `{"target":"payments","operation_type":"` + opType + `","intent_ref":"` + intent + `","payload":{"amount":1}}`
		}
		for name, c := range map[string]struct{ body, field string }{
			"InvalidUTF8":       {body("charge", "approval-\xff"), "intent_ref"},
			"LoneSurrogate":     {body("charge", `approval-\ud800`), "intent_ref"},
			"LowSurrogateFirst": {body("charge", `approval-\udc00\ud800`), "intent_ref"},
			"NotNFC":            {body("charge", `cafe\u0301`), "intent_ref"},
			"Newline":           {body("charge", `approval\nforged`), "intent_ref"},
			"TerminalEscape":    {body("charge", `\u001b[31mapproval`), "intent_ref"},
			"RawControl":        {body("charge", "approval\x7f"), "intent_ref"},
			"ZeroWidthSpace":    {body("charge", `appro\u200bval`), "intent_ref"},
			"TooManyCharacters": {body("charge", strings.Repeat("é", 257)), "intent_ref"},
			"TypeInvalidUTF8":   {body("char\xffge", "approval-t1"), "operation_type"},
			"TypeNUL":           {body(`charge\u0000`, "approval-t2"), "operation_type"},
			"TypeTooLong":       {body(strings.Repeat("c", 129), "approval-t3"), "operation_type"},
		} {
			t.Run(name, func(t *testing.T) {
				wantMessage(t, e.post(c.body), http.StatusUnprocessableEntity, "invalid", c.field)
			})
		}
		long := strings.Repeat("é", 256) // 512 bytes: the limit counts characters
		r := e.post(body("charge", long))
		if r.status != http.StatusCreated || r.json(t)["intent_ref"] != long {
			t.Fatalf("256-character intent_ref: %d %s", r.status, r.body)
		}
		if r := e.post(body("charge", `caf\u00e9 №7 – 請求`)); r.status != http.StatusCreated {
			t.Fatalf("readable non-ASCII intent_ref: %d %s", r.status, r.body)
		}
		page := e.do(http.MethodGet, "/api/v1/operations", "", nil).json(t)["operations"].([]any)
		if len(page) != 2 {
			t.Fatalf("refused requests left %d operations, want 2", len(page))
		}
	})
}

// Item 10 of issue 9: both stores answer alike. Operation ids are
// normalised (an upper-case id is the same operation); other spellings of a
// UUID, bad cursors and query parameters a database cannot hold (NUL,
// invalid UTF-8) are a 4xx, never a 500, with the same answer on
// PostgreSQL and SQLite.
func TestAPI_IdsCursorsAndQueries(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{})
		op := e.post(charge).json(t)
		id := op["operation_id"].(string)
		cursor := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		for _, c := range []struct {
			name, path string
			status     int
			code       string
		}{
			{"Id", "/api/v1/operations/" + id, 200, ""},
			{"UpperCaseId", "/api/v1/operations/" + strings.ToUpper(id), 200, ""},
			{"MixedCaseId", "/api/v1/operations/" + strings.ToUpper(id[:8]) + id[8:], 200, ""},
			{"BracedId", "/api/v1/operations/%7B" + id + "%7D", 404, "not_found"},
			{"UrnId", "/api/v1/operations/urn:uuid:" + id, 404, "not_found"},
			{"IdWithoutHyphens", "/api/v1/operations/" + strings.ReplaceAll(id, "-", ""), 404, "not_found"},
			{"NotAUUID", "/api/v1/operations/not-a-uuid", 404, "not_found"},
			{"IdNUL", "/api/v1/operations/%00", 404, "not_found"},
			{"IdInvalidUTF8", "/api/v1/operations/%FF", 404, "not_found"},
			{"IntentNUL", "/api/v1/operations?intent_ref=%00", 422, "invalid"},
			{"IntentWithNUL", "/api/v1/operations?intent_ref=approval-1%00", 422, "invalid"},
			{"IntentInvalidUTF8", "/api/v1/operations?intent_ref=%FF", 422, "invalid"},
			{"IntentTooLong", "/api/v1/operations?intent_ref=" + strings.Repeat("x", 1000), 422, "invalid"},
			{"IntentUnknown", "/api/v1/operations?intent_ref=nothing", 200, ""},
			{"StateNUL", "/api/v1/operations?state=%00", 422, "invalid"},
			{"LimitInvalidUTF8", "/api/v1/operations?limit=%FF", 422, "invalid"},
			{"CursorNotBase64", "/api/v1/operations?cursor=%25%25", 422, "invalid"},
			{"CursorInvalidUTF8", "/api/v1/operations?cursor=%FF", 422, "invalid"},
			{"CursorNoId", "/api/v1/operations?cursor=" + cursor("123"), 422, "invalid"},
			{"CursorBadId", "/api/v1/operations?cursor=" + cursor("123/not-a-uuid"), 422, "invalid"},
			{"CursorBracedId", "/api/v1/operations?cursor=" + cursor("123/{"+id+"}"), 422, "invalid"},
			{"CursorHugeTime", "/api/v1/operations?cursor=" + cursor("9223372036854775807/"+id), 422, "invalid"},
			{"CursorNegativeTime", "/api/v1/operations?cursor=" + cursor("-9223372036854775808/"+id), 422, "invalid"},
			{"CursorUpperCaseId", "/api/v1/operations?cursor=" + cursor("4102444800000000/"+strings.ToUpper(id)), 200, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := e.do(http.MethodGet, c.path, "", nil)
				if c.code != "" {
					wantError(t, r, c.status, c.code)
					return
				}
				if r.status != c.status {
					t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
				}
				if strings.Contains(c.path, "/operations/") && r.json(t)["operation_id"] != id {
					t.Fatalf("operation_id %v, want the canonical %s", r.json(t)["operation_id"], id)
				}
			})
		}
		// A cursor naming the operation in upper case pages exactly as the
		// canonical one does.
		r := e.do(http.MethodGet, "/api/v1/operations?cursor="+cursor("4102444800000000/"+strings.ToUpper(id)), "", nil)
		if ops := r.json(t)["operations"].([]any); len(ops) != 1 {
			t.Fatalf("a cursor after the year 2100 listed %d operations, want 1", len(ops))
		}
	})
}

// boundTarget is a target whose contract has settle write the operation's
// reference and the tenant into the payload, as a real provider's does.
func boundTarget(t *testing.T) web.Target {
	t.Helper()
	set, err := target.Parse("bound.yaml", []byte(`targets:
  - name: bound
    owner: {team: Payments team, escalation_contact: pay@example.com}
    documentation: {url: "https://docs.example.com/pay", checked: 2026-11-01}
    base_url: http://127.0.0.1:9
    deadline: 1h
    create: {method: POST, path: /v1/charges}
    reference_field: metadata.settle_ref
    tenant_field: metadata.tenant
    response: {id_field: id, match: [amount, metadata.settle_ref, metadata.tenant]}
`))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Get("bound")
	return web.Target{Owner: "Payments team", Bind: c.Bind}
}

// Item 11 of issue 9: a payload that clashes with the fields settle writes
// into it (the contract's reference_field and tenant_field) is a 422 that
// names the field and the clash, not "internal error".
func TestAPI_BoundFieldClash(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		ts := targets{"payments": testTargets["payments"], "bound": boundTarget(t)}
		e := serve(t, s, web.Config{Targets: ts})
		body := func(intent, payload string) string {
			return `{"target":"bound","operation_type":"charge","intent_ref":"` + intent + `","payload":` + payload + `}`
		}
		for name, c := range map[string]struct {
			payload string
			parts   []string
		}{
			"ReferenceAlreadySet": {`{"amount":1,"metadata":{"settle_ref":"mine"}}`, []string{"payload.metadata.settle_ref", "reference", "leave it out"}},
			"TenantAlreadySet":    {`{"amount":1,"metadata":{"tenant":"globex"}}`, []string{"payload.metadata.tenant", "tenant", "leave it out"}},
			"ReferenceNotString":  {`{"amount":1,"metadata":{"settle_ref":7}}`, []string{"payload.metadata.settle_ref"}},
			"MetadataString":      {`{"amount":1,"metadata":"note"}`, []string{"payload.metadata is a string, not an object", "metadata.settle_ref"}},
			"MetadataArray":       {`{"amount":1,"metadata":[1,2]}`, []string{"payload.metadata is an array, not an object"}},
			"MetadataNull":        {`{"amount":1,"metadata":null}`, []string{"payload.metadata is null, not an object"}},
			"MetadataNumber":      {`{"amount":1,"metadata":5}`, []string{"payload.metadata is a number, not an object"}},
		} {
			t.Run(name, func(t *testing.T) {
				r := e.post(body("clash-"+name, c.payload))
				wantMessage(t, r, http.StatusUnprocessableEntity, "invalid", c.parts...)
				if strings.Contains(string(r.body), "internal") || strings.Contains(string(r.body), "globex") || strings.Contains(string(r.body), "mine") {
					t.Fatalf("message is internal or quotes the payload: %s", r.body)
				}
			})
		}
		r := e.post(body("fits", `{"amount":1,"metadata":{"note":"x"}}`))
		if r.status != http.StatusCreated {
			t.Fatalf("a payload with room for settle's fields: %d %s", r.status, r.body)
		}
		if again := e.post(body("fits", `{"metadata":{"note":"x"},"amount":1}`)); again.status != http.StatusOK {
			t.Fatalf("retry of a bound payload: %d %s", again.status, again.body)
		}
	})
}
