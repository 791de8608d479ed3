package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// tenantStores are the two stores the tenant tests run on.
func tenantStores(t *testing.T) map[string]string {
	return map[string]string{
		"SQLite":   migratedSQLite(t, t.TempDir()),
		"Postgres": schemaURL(t),
	}
}

// paramActions returns the tenant's parameter actions, oldest first, as
// "kind object reason by", read from the store the CLI wrote.
func paramActions(t *testing.T, db, tenant string) []string {
	t.Helper()
	acts := tenantActions(t, db, tenant)
	var out []string
	for i := len(acts) - 1; i >= 0; i-- {
		a := acts[i]
		if a.Kind == ledger.ActionTenantParamSet || a.Kind == ledger.ActionTenantParamUnset {
			out = append(out, strings.Join([]string{string(a.Kind), a.Object, a.Reason, a.Subject, a.Role}, " | "))
		}
	}
	return out
}

// tenantActions returns the tenant's actions, newest first, read from the
// store the CLI wrote.
func tenantActions(t *testing.T, db, tenant string) []ledger.Action {
	t.Helper()
	st, _, err := openStore(context.Background(), db, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acts, err := st.Actions(context.Background(), ledger.ActionFilter{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// set, show (text and JSON) and unset, on both stores; each change is
// recorded as the --by person's action, naming parameters, never values.
func TestTenant_SetShowUnset(t *testing.T) {
	t.Parallel()
	for name, db := range tenantStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := settleCmd(t, "tenant", "set", "--tenant", "acme", "--param", "account=acct_123",
				"--param", "region=eu west", "--by", "ada", "--database-url", db)
			if code != 0 || out != "set account, region for tenant acme\n" || errOut != "" {
				t.Fatalf("set: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			code, out, errOut = settleCmd(t, "tenant", "show", "--tenant", "acme", "--database-url", db)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != 0 || errOut != "" || len(lines) != 3 || strings.Fields(lines[0])[1] != "VALUE" ||
				!strings.HasPrefix(lines[1], "account  ") || !strings.Contains(lines[1], "acct_123") ||
				!strings.HasPrefix(lines[2], "region   ") || !strings.Contains(lines[2], "eu west") {
				t.Fatalf("show: exit %d, stdout\n%s\nstderr %q", code, out, errOut)
			}

			code, out, _ = settleCmd(t, "tenant", "unset", "--tenant", "acme", "--param", "region", "--by", "ada", "--database-url", db)
			if code != 0 || out != "unset region for tenant acme\n" {
				t.Fatalf("unset: exit %d, %q", code, out)
			}
			code, out, _ = settleCmd(t, "tenant", "show", "--tenant", "acme", "--format", "json", "--database-url", db)
			var shown struct {
				Tenant string
				Params []struct {
					Name, Value string
					UpdatedAt   time.Time `json:"updated_at"`
				}
			}
			if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil || shown.Tenant != "acme" ||
				len(shown.Params) != 1 || shown.Params[0].Name != "account" || shown.Params[0].Value != "acct_123" ||
				time.Since(shown.Params[0].UpdatedAt) > time.Hour {
				t.Fatalf("show json: exit %d, %v, %s", code, err, out)
			}

			// Another tenant sees none of acme's.
			code, out, _ = settleCmd(t, "tenant", "show", "--tenant", "globex", "--database-url", db)
			if code != 0 || out != "tenant globex has no request parameters\n" {
				t.Fatalf("show globex: exit %d, %q", code, out)
			}
			if _, out, _ = settleCmd(t, "tenant", "show", "--tenant", "globex", "--format", "json", "--database-url", db); !strings.Contains(out, `"params": []`) {
				t.Fatalf("show globex json: %s", out)
			}

			acts := paramActions(t, db, "acme")
			want := []string{
				"tenant_param.set | account | first set | cli:ada | admin",
				"tenant_param.set | region | first set | cli:ada | admin",
				"tenant_param.unset | region | removed | cli:ada | admin",
			}
			if strings.Join(acts, "\n") != strings.Join(want, "\n") {
				t.Fatalf("actions:\n%s\nwant:\n%s", strings.Join(acts, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// A value is not changed or removed under an operation not yet final,
// unless --force, which the record keeps; a first value is always set.
func TestTenant_Guard(t *testing.T) {
	t.Parallel()
	for name, db := range tenantStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if code, _, errOut := settleCmd(t, "tenant", "set", "--tenant", "acme", "--param", "account=acct_old", "--by", "ada", "--database-url", db); code != 0 {
				t.Fatalf("set: %d %s", code, errOut)
			}
			st, _, err := openStore(context.Background(), db, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = st.Create(context.Background(), ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "order-1",
				Target: "payments", Payload: []byte(`{"amount":1}`)})
			st.Close()
			if err != nil {
				t.Fatal(err)
			}

			for _, args := range [][]string{
				{"set", "--param", "account=acct_new"},
				{"unset", "--param", "account"},
			} {
				code, out, errOut := settleCmd(t, append(append([]string{"tenant"}, args...), "--tenant", "acme", "--by", "ada", "--database-url", db)...)
				if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "1 operation not yet final") ||
					!strings.Contains(errOut, "--force") || strings.Contains(errOut, "acct_") {
					t.Fatalf("%v: exit %d, stdout %q, stderr %q; want one line with the count and --force, no value", args, code, out, errOut)
				}
			}
			if code, _, errOut := settleCmd(t, "tenant", "set", "--tenant", "acme", "--param", "region=eu", "--by", "ada", "--database-url", db); code != 0 {
				t.Fatalf("a first value was refused: %s", errOut)
			}
			if code, _, errOut := settleCmd(t, "tenant", "set", "--tenant", "acme", "--param", "account=acct_new", "--force", "--by", "bob", "--database-url", db); code != 0 {
				t.Fatalf("--force: %d %s", code, errOut)
			}
			if _, out, _ := settleCmd(t, "tenant", "show", "--tenant", "acme", "--database-url", db); !strings.Contains(out, "acct_new") {
				t.Fatalf("show after --force:\n%s", out)
			}
			acts := paramActions(t, db, "acme")
			if len(acts) != 3 || acts[2] != "tenant_param.set | account | changed, forced with 1 operation not yet final | cli:bob | admin" {
				t.Fatalf("actions:\n%s", strings.Join(acts, "\n"))
			}
		})
	}
}

// Malformed flags are usage errors (exit 2) that name the flag; invalid
// names and values are one line (exit 1) that never quotes the value. No
// store is touched, not even created.
func TestTenant_Invalid(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	db := "sqlite:" + path
	const v = "acct_9f3"
	for name, c := range map[string]struct {
		args []string
		code int
		want string // in stderr
	}{
		"UnknownVerb":  {[]string{"frob"}, 2, "unexpected argument frob"},
		"NoTenant":     {[]string{"set", "--param", "account=" + v}, 2, "--tenant"},
		"NoParam":      {[]string{"set", "--tenant", "acme"}, 2, "--param"},
		"NoEquals":     {[]string{"set", "--tenant", "acme", "--param", v}, 2, "--param #1 must be NAME=VALUE"},
		"EmptyName":    {[]string{"set", "--tenant", "acme", "--param", "account=x", "--param", "=" + v}, 2, "--param #2 must be NAME=VALUE"},
		"UnsetValue":   {[]string{"unset", "--tenant", "acme", "--param", "account=" + v}, 2, "--param #1 must be a NAME alone"},
		"Twice":        {[]string{"set", "--tenant", "acme", "--param", "account=" + v, "--param", "account=y"}, 2, "--param account is given twice"},
		"Format":       {[]string{"show", "--tenant", "acme", "--format", "xml"}, 2, "--format"},
		"Extra":        {[]string{"show", "--tenant", "acme", "extra"}, 2, "unexpected argument"},
		"Tenant":       {[]string{"set", "--tenant", "Not Valid", "--param", "account=" + v}, 1, "tenant must be"},
		"ShowTenant":   {[]string{"show", "--tenant", "Not Valid"}, 1, "tenant must be"},
		"Name":         {[]string{"set", "--tenant", "acme", "--param", "Stripe-Account=" + v}, 1, "parameter name must be"},
		"ValueNewline": {[]string{"set", "--tenant", "acme", "--param", "account=" + v + "\nX-Evil: 1"}, 1, "parameter account: the value must be printable"},
		"ValueSpace":   {[]string{"set", "--tenant", "acme", "--param", "account= " + v}, 1, "must not begin or end with a space"},
		"ValueLong":    {[]string{"set", "--tenant", "acme", "--param", "account=" + v + strings.Repeat("x", 256)}, 1, "1-256 characters"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := settleCmd(t, append(append([]string{"tenant"}, c.args...), "--database-url", db)...)
			if code != c.code || out != "" || !strings.Contains(errOut, c.want) || strings.Contains(errOut, v) ||
				(code == 1 && strings.Count(errOut, "\n") != 1) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d with %q and no value", code, out, errOut, c.code, c.want)
			}
		})
	}
	t.Cleanup(func() {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("a rejected command touched the store: %v", err)
		}
	})
	if code, _, errOut := settleCmd(t, "tenant"); code != 2 || !strings.Contains(errOut, "Usage: settle tenant") {
		t.Fatalf("no verb: exit %d, %q", code, errOut)
	}
	if code, out, _ := settleCmd(t, "tenant", "-h"); code != 0 || !strings.Contains(out, "settle tenant set --tenant NAME --param NAME=VALUE") {
		t.Fatalf("help: exit %d\n%s", code, out)
	}
}
