package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Charge statuses.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
)

// Object is a charge (in FlavorStripe, a PaymentIntent) as the simulator
// recorded it. FlavorSettle's API shows every field except IdempotencyKey;
// FlavorStripe's API shows the PaymentIntent built from it. GET /_sim/objects
// and Objects show all.
type Object struct {
	ID          string          `json:"id"`
	Reference   string          `json:"reference"`
	Tenant      string          `json:"tenant"`
	Amount      int64           `json:"amount"`
	Currency    string          `json:"currency"`
	Status      string          `json:"status"`
	Created     int64           `json:"created"` // unix seconds, by Config.Now
	Description string          `json:"description,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	// PayloadSHA256 is the hex SHA-256 of the exact create request body, so
	// tests can tell which payload produced an object.
	PayloadSHA256 string `json:"payload_sha256"`
	// IdempotencyKey is the Idempotency-Key header of the creating request,
	// recorded in every class even where the provider ignores it.
	IdempotencyKey string `json:"idempotency_key"`
	// Version starts at 1 and grows with every change; it is the ETag.
	Version int `json:"version"`
	// Account is the Stripe account that owns a FlavorStripe object (the
	// Stripe-Account header, or PlatformAccount); empty in FlavorSettle.
	Account string `json:"account,omitempty"`
	// Params are a FlavorStripe object's create parameters as decoded from
	// the form (hashes as objects, arrays as arrays, every value a string),
	// so that tests can see exactly what a client sent; empty in FlavorSettle.
	Params json.RawMessage `json:"params,omitempty"`
}

// publicObject hides the idempotency key, which providers do not echo: the
// outer field shadows Object's field of the same JSON name and is always
// omitted.
type publicObject struct {
	Object
	Hidden *struct{} `json:"idempotency_key,omitempty"`
}

func (o Object) public() publicObject { return publicObject{Object: o} }

// etag is the quoted entity tag of an object version.
func etag(version int) string { return `"` + strconv.Itoa(version) + `"` }

// clone returns a copy of o that shares no memory with it.
func (o Object) clone() Object {
	o.Metadata = bytes.Clone(o.Metadata)
	o.Params = bytes.Clone(o.Params)
	return o
}

// createInput is a validated create request.
type createInput struct {
	reference, tenant     string
	amount                int64
	currency, description string
	metadata              json.RawMessage
	hash                  string // hex SHA-256 of the exact body bytes
}

// parseCreate validates a create body. Its errors are safe to show clients.
func parseCreate(body []byte, refField, tenantField string) (createInput, error) {
	in := createInput{hash: sha256Hex(body)}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return in, errors.New("body must be a JSON object")
	}
	raw, ok := top["amount"]
	if !ok {
		return in, errors.New("amount is required")
	}
	if err := json.Unmarshal(raw, &in.amount); err != nil || in.amount <= 0 {
		return in, errors.New("amount must be an integer greater than zero")
	}
	if err := json.Unmarshal(top["currency"], &in.currency); err != nil || !isCurrency(in.currency) {
		return in, errors.New("currency must be a three-letter code")
	}
	if raw, ok := top["description"]; ok {
		if err := json.Unmarshal(raw, &in.description); err != nil {
			return in, errors.New("description must be a string")
		}
	}
	if raw, ok := top["metadata"]; ok && string(raw) != "null" {
		var buf bytes.Buffer
		if raw[0] != '{' || json.Compact(&buf, raw) != nil {
			return in, errors.New("metadata must be an object")
		}
		in.metadata = buf.Bytes()
	}
	if in.reference, ok = stringAt(top, refField); !ok {
		return in, fmt.Errorf("%s is required (a non-empty string)", refField)
	}
	if in.tenant, ok = stringAt(top, tenantField); !ok {
		return in, fmt.Errorf("%s is required (a non-empty string)", tenantField)
	}
	return in, nil
}

// stringAt returns the non-empty string at a dot-separated path in a JSON
// object.
func stringAt(obj map[string]json.RawMessage, path string) (string, bool) {
	segs := strings.Split(path, ".")
	for _, seg := range segs[:len(segs)-1] {
		var next map[string]json.RawMessage
		if err := json.Unmarshal(obj[seg], &next); err != nil || next == nil {
			return "", false
		}
		obj = next
	}
	var s string
	if err := json.Unmarshal(obj[segs[len(segs)-1]], &s); err != nil || s == "" {
		return "", false
	}
	return s, true
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// newID returns prefix plus 32 random hex digits. IDs come from crypto
// randomness rather than Seed so that restarted simulators never reissue one.
func newID(prefix string) string {
	u := uuid.New()
	return prefix + hex.EncodeToString(u[:])
}

// apiError is the JSON body of every error response.
type apiError struct {
	Error   string `json:"error"`
	Message string `json:"message,omitempty"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("sim: marshal: " + err.Error()) // only our own plain types are marshalled
	}
	return b
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) { writeRaw(w, status, mustJSON(v)) }

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, apiError{Error: code, Message: message})
}
