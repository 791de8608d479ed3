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
