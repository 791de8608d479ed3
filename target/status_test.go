package target

import "testing"

// ErrorObject finds the object an error answer carries, as Stripe's 402
// carries the declined PaymentIntent in error.payment_intent.
func TestContract_ErrorObject(t *testing.T) {
	t.Parallel()
	c := parseOne(t, `    outcomes: [{status: 402, outcome: rejected_without_side_effect, documentation: "https://docs.example.com/declines"}]
`)
	if _, ok := c.ErrorObject([]byte(`{"error":{"payment_intent":{"id":"pi_1"}}}`)); ok {
		t.Error("a contract without error_object_field read an error object")
	}
	c = parseOne(t, `    outcomes: [{status: 402, outcome: rejected_without_side_effect, documentation: "https://docs.example.com/declines"}]
    response:
      id_field: id
      match: [amount]
      status_field: status
      statuses: [{value: succeeded, outcome: succeeded}, {value: requires_payment_method, outcome: failed, documentation: "https://docs.example.com/s"}]
      error_object_field: error.payment_intent
`, "response")
	if c.Response.ErrorObjectField != "error.payment_intent" {
		t.Fatalf("ErrorObjectField = %q", c.Response.ErrorObjectField)
	}
	obj, ok := c.ErrorObject([]byte(`{"error":{"type":"card_error","payment_intent":{"id":"pi_1","amount":12345678901234567890,"status":"requires_payment_method"}}}`))
	if !ok {
		t.Fatal("no error object")
	}
	if id, err := c.RemoteID(obj); id != "pi_1" || err != nil {
		t.Errorf("RemoteID = %q, %v", id, err)
	}
	if st, err := c.ObjectStatus(obj); st.Outcome != ObjectFailed || st.Status != "requires_payment_method" || err != nil {
		t.Errorf("ObjectStatus = %+v, %v", st, err)
	}
	if string(obj) != `{"amount":12345678901234567890,"id":"pi_1","status":"requires_payment_method"}` {
		t.Errorf("object %s: numbers must be kept exactly", obj)
	}
	for _, body := range []string{`{"error":{"payment_intent":"pi_1"}}`, `{"error":{}}`, `{"error":"x"}`, `not json`, `[]`} {
		if obj, ok := c.ErrorObject([]byte(body)); ok {
			t.Errorf("ErrorObject(%s) = %s", body, obj)
		}
	}
}
