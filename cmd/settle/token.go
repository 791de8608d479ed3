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
	return `A token is made only for a tenant settle knows (settle tenant create,
or --new-tenant here), and carries a --name that says what it is for.
settle token list shows when each was last used (to within a minute).
Creating and revoking are recorded as actions of cli:NAME in role admin;
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
	Name        string `help:"what the token is for, e.g. \"billing service, production\" (required)"`
	NewTenant   bool   `name:"new-tenant" help:"create the tenant first when settle does not know it (recorded as tenant.create)"`
	Rate        int    `help:"API requests a second this token may send on average (429 beyond); 0: the replica's --rate-limit"`
	Burst       int    `help:"API requests this token may send at once; 0: the replica's --rate-burst, or a second's worth of --rate"`
	byOption    `embed:""`
}

func (c *tokenCreate) check() error {
	var name error
	if c.Name == "" {
		name = usagef("--name is required (what the token is for)")
	}
	var rate error
	if c.Rate < 0 || c.Rate > ledger.MaxTokenRate || c.Burst < 0 || c.Burst > ledger.MaxTokenRate {
		rate = usagef("--rate and --burst are whole numbers from 1 to %d, or 0 for the replica's defaults", ledger.MaxTokenRate)
	}
	return errors.Join(c.checkTenant(), name, rate, c.checkBy())
}

func (c *tokenCreate) runLedger(ctx context.Context, e *env, s *services) error {
	secret, t, err := ledger.NewToken(c.Tenant, c.Name, time.Now())
	if err != nil {
		return err
	}
	t.Rate = ledger.TokenRate{PerSecond: c.Rate, Burst: c.Burst}
	actx := asCLI(ctx, c.By, cliRoleAdmin)
	if c.NewTenant {
		created, err := ensureTenant(actx, s.store, c.Tenant)
		if err != nil {
			return err
		}
		if created {
			fmt.Fprintf(e.stderr, "created tenant %s\n", shown(c.Tenant))
		}
	}
	if err := s.store.CreateToken(actx, t); err != nil {
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
	fmt.Fprintln(w, "ID\tTENANT\tNAME\tRATE\tCREATED\tLAST USED\tREVOKED")
	for _, t := range tokens {
		revoked, used := "-", "never"
		if t.RevokedAt != nil {
			revoked = t.RevokedAt.Format(time.RFC3339)
		}
		if t.LastUsedAt != nil {
			used = t.LastUsedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", shown(t.ID), shown(t.Tenant), shown(t.Name), t.Rate.String(),
			t.CreatedAt.Format(time.RFC3339), used, revoked)
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
