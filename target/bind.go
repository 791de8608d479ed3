package target

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
