package main

import (
	"context"

	"settle/target"
)

// tenantParams gives the target client the tenants' request parameters
// from the store, when the store keeps them (it implements
// target.ParamSource); a store that does not yet gives every tenant none,
// so a contract that names a parameter escalates its operations unsent.
type tenantParams struct{ store any }

func (p tenantParams) TenantParams(ctx context.Context, tenant string) (map[string]string, error) {
	if s, ok := p.store.(target.ParamSource); ok {
		return s.TenantParams(ctx, tenant)
	}
	return map[string]string{}, nil
}

// targetClient builds the one client that talks to targets: the contracts'
// credentials from the environment (read by readCredentials at start-up)
// and the tenants' parameters from the store.
func targetClient(secrets *target.Secrets, st any) *target.Client {
	return target.NewClient(target.ClientOptions{Secrets: secrets, Params: tenantParams{st}})
}
