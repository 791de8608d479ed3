package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

// tokenCmd is `settle token`: a tenant's API tokens.
type tokenCmd struct {
	Create tokenCreate `cmd:"" help:"print a new API token for the tenant (shown once)"`
	List   tokenList   `cmd:"" help:"list the tenant's tokens (ids, never secrets)"`
	Revoke tokenRevoke `cmd:"" help:"revoke one of the tenant's tokens"`
}

// Help is the detail of settle token --help.
func (tokenCmd) Help() string {
	return `Creating and revoking are recorded as actions of cli:NAME in role admin;
--by defaults to the operating-system user.`
}

type tokenTenant struct {
	Tenant string `help:"tenant the token acts for (required)"`
}

func (t tokenTenant) checkTenant() error {
	if t.Tenant == "" {
		return usagef("--tenant is required (the tenant the token acts for)")
	}
	return nil
}

type tokenCreate struct {
	dbOption    `embed:""`
	tokenTenant `embed:""`
	byOption    `embed:""`
}

func (c *tokenCreate) check() error { return errors.Join(c.checkTenant(), c.checkBy()) }

func (c *tokenCreate) runLedger(ctx context.Context, e *env, s *services) error {
	secret, t, err := ledger.NewToken(c.Tenant, time.Now())
	if err != nil {
		return err
	}
	if err := s.store.CreateToken(asCLI(ctx, c.By, cliRoleAdmin), t); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "created %s for tenant %s; the token is shown only once\n", shown(t.ID), shown(t.Tenant))
	fmt.Fprintln(e.stdout, secret)
	return nil
}

type tokenList struct {
	dbOption    `embed:""`
	tokenTenant `embed:""`
}

func (c *tokenList) check() error { return c.checkTenant() }

func (c *tokenList) runLedger(ctx context.Context, e *env, s *services) error {
	tokens, err := s.store.ListTokens(ctx, c.Tenant)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTENANT\tCREATED\tREVOKED")
	for _, t := range tokens {
		revoked := "-"
		if t.RevokedAt != nil {
			revoked = t.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", shown(t.ID), shown(t.Tenant), t.CreatedAt.Format(time.RFC3339), revoked)
	}
	return w.Flush()
}

type tokenRevoke struct {
	ID          string `arg:"" optional:"" help:"the token's id (see settle token list)"`
	dbOption    `embed:""`
	tokenTenant `embed:""`
	byOption    `embed:""`
}

func (c *tokenRevoke) check() error {
	if c.ID == "" {
		return usagef("the token ID is required (see settle token list)")
	}
	return errors.Join(c.checkTenant(), c.checkBy())
}

func (c *tokenRevoke) runLedger(ctx context.Context, e *env, s *services) error {
	if err := s.store.RevokeToken(asCLI(ctx, c.By, cliRoleAdmin), c.Tenant, c.ID, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked %s\n", shown(c.ID))
	return nil
}
