package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

// tenantCreate is `settle tenant create`: the explicit step before a
// tenant's first token, recorded as an action of cli:NAME.
type tenantCreate struct {
	tenantName `embed:""`
	byOption   `embed:""`
}

func (c *tenantCreate) check() error {
	if err := c.checkName(); err != nil {
		return err
	}
	return errors.Join(validTenant(c.Tenant), c.checkBy())
}

func (c *tenantCreate) runLedger(ctx context.Context, e *env, s *services) error {
	if err := s.store.CreateTenant(asCLI(ctx, c.By, cliRoleAdmin), c.Tenant, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created tenant %s\n", shown(c.Tenant))
	return nil
}

// tenantList is `settle tenant list`.
type tenantList struct {
	dbOption `embed:""`
}

func (c *tenantList) check() error { return nil }

func (c *tenantList) runLedger(ctx context.Context, e *env, s *services) error {
	ts, err := s.store.ListTenants(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TENANT\tCREATED")
	for _, t := range ts {
		fmt.Fprintf(w, "%s\t%s\n", shown(t.ID), t.CreatedAt.Format(time.RFC3339))
	}
	return w.Flush()
}

// ensureTenant creates tenant unless settle knows it already: the
// explicit --new-tenant of settle token create, and the demo's tenants.
func ensureTenant(ctx context.Context, s ledger.TenantStore, tenant string) (created bool, err error) {
	err = s.CreateTenant(ctx, tenant, time.Now())
	if ledger.ErrorCode(err) == ledger.EConflict {
		return false, nil
	}
	return err == nil, err
}
