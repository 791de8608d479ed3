package target

import (
	"encoding/json"
	"fmt"
	"strings"

	"settle/ledger"
)

// Bind writes settle's references into an approved payload before it is
// canonicalised and hashed: the operation's remote key into ReferenceField
// and the tenant into TenantField, where the contract names them, so that the
// remote object carries them and lookups and evidence can be matched. It is
// deterministic, as ledger.NewOperation.Bind requires.
//
// A payload that already sets one of those fields to another value, or
// where a field cannot be placed (its parent is a string, an array, null…),
// is a ledger.EInvalid that names the field and the clash.
func (c *Contract) Bind(payload []byte, remoteKey, tenant string) ([]byte, error) {
	return c.bind(payload, remoteKey, tenant, false)
}

// Rebind is Bind for a payload settle bound already, the approved payload
// of an operation being superseded: the reference it carries (a string) is
// replaced by the successor's remote key, where Bind would refuse it. The
// tenant field is kept as Bind keeps it: it must already be tenant's.
// Deterministic, as ledger.Rebinder requires.
func (c *Contract) Rebind(payload []byte, remoteKey, tenant string) ([]byte, error) {
	return c.bind(payload, remoteKey, tenant, true)
}

func (c *Contract) bind(payload []byte, remoteKey, tenant string, replace bool) ([]byte, error) {
	var fields []boundField
	if c.ReferenceField != "" {
		fields = append(fields, boundField{path: c.ReferenceField, value: remoteKey, replace: replace,
			what: fmt.Sprintf("the operation's reference (target %s, reference_field)", c.Name)})
	}
	if c.TenantField != "" {
		fields = append(fields, boundField{path: c.TenantField, value: tenant,
			what: fmt.Sprintf("the tenant (target %s, tenant_field)", c.Name)})
	}
	out := payload
	if len(fields) > 0 {
		var err error
		if out, err = inject(payload, fields); err != nil {
			return nil, err
		}
	}
	if err := c.checkSendable(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkSendable refuses at registration, with 422, a payload that could
// never be sent: one holding a body field's path, or one that form
// encoding cannot carry. Refused now, it is never approved, claimed and
// then escalated unsent.
func (c *Contract) checkSendable(payload []byte) error {
	if len(c.BodyFields) == 0 && c.Encoding != EncodingForm {
		return nil
	}
	v, err := decodeJSON(payload)
	if err != nil {
		return nil // the ledger refuses it with its own words
	}
	if err := c.checkBodyFields(v); err != nil {
		return err
	}
	if c.Encoding == EncodingForm {
		if _, err := FormEncode(payload); err != nil {
			return ledger.Errorf(ledger.EInvalid, "target %s takes form-encoded bodies: %s", c.Name,
				strings.TrimPrefix(err.Error(), "form encoding: "))
		}
	}
	return nil
}

// References reads settle's reference and tenant back out of a remote object
// (a lookup result or an inbound event's object), from the fields Bind
// wrote. Either is "" when the contract names no such field or the object
// lacks it or holds a non-string there.
func (c *Contract) References(object []byte) (reference, tenant string) {
	v, err := decodeJSON(object)
	if err != nil {
		return "", ""
	}
	str := func(path string) string {
		if path == "" {
			return ""
		}
		x, ok := get(v, path)
		if s, isStr := x.(string); ok && isStr {
			return s
		}
		return ""
	}
	return str(c.ReferenceField), str(c.TenantField)
}

// EventParts reads an inbound webhook event: its own id (at
// webhook.event_id_field, "" when absent) and its remote object (at
// webhook.object_field, nil when absent or not an object).
func (c *Contract) EventParts(body []byte) (eventID string, object []byte) {
	if c.Webhook == nil {
		return "", nil
	}
	v, err := decodeJSON(body)
	if err != nil {
		return "", nil
	}
	if id, ok := get(v, c.Webhook.EventIDField); ok {
		if s, isStr := id.(string); isStr {
			eventID = s
		}
	}
	if obj, ok := get(v, c.Webhook.ObjectField); ok {
		if _, isObj := obj.(map[string]any); isObj {
			object, _ = json.Marshal(obj)
		}
	}
	return eventID, object
}
