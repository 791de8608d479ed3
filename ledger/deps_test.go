package ledger_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: the stores depend only on ledger: console identity (OIDC, sessions,
// roles) stays out of them, and the domain knows no HTTP, SQL driver or
// template code. go list reports each package's whole import graph, tests
// left out.
func TestDependencies(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	console := []string{"settle/auth", "settle/web", "settle/views", "github.com/coreos/go-oidc",
		"github.com/gorilla/", "golang.org/x/oauth2", "github.com/a-h/templ", "github.com/labstack/echo"}
	for pkg, forbidden := range map[string][]string{
		"settle/ledger/postgres":   console,
		"settle/ledger/sqlite":     console,
		"settle/ledger/ledgertest": console,
		"settle/ledger/storetest":  console,
		// database/sql/driver is allowed: uuid implements its Valuer.
		"settle/ledger": append(console, "=net/http", "=database/sql", "github.com/jackc/", "modernc.org/",
			"=html/template"),
	} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				// "=p" forbids p itself; "p/" every package under p; "p"
				// both p and the packages under it.
				exact, ok := strings.CutPrefix(f, "=")
				bad := dep == exact
				if !ok {
					bad = dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, strings.TrimSuffix(f, "/")+"/")
				}
				if bad {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
