package target

import "encoding/json"

// Bind writes settle's references into an approved payload before it is
// canonicalised and hashed: the operation's remote key into ReferenceField
// and the tenant into TenantField, where the contract names them, so that the
// remote object carries them and lookups and evidence can be matched. It is
// deterministic, as ledger.NewOperation.Bind requires.
func (c *Contract) Bind(payload []byte, remoteKey, tenant string) ([]byte, error) {
	fields := map[string]string{}
	if c.ReferenceField != "" {
		fields[c.ReferenceField] = remoteKey
	}
	if c.TenantField != "" {
		fields[c.TenantField] = tenant
	}
	if len(fields) == 0 {
		return payload, nil
	}
	return InjectFields(payload, fields)
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
