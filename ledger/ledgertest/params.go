package ledgertest

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
)

// RunTenantParams checks ledger.TenantParamStore and TenantParamLister on
// the stores h makes: setting, overwriting and unsetting, tenant isolation,
// validation, the limit, the recorded actions, and the guard that keeps a
// value from changing under operations that were sent with it.
func RunTenantParams(t *testing.T, h Harness) {
	t.Run("SetOverwriteUnset", func(t *testing.T) { testParamsSetUnset(t, h) })
	t.Run("TenantIsolation", func(t *testing.T) { testParamsIsolation(t, h) })
	t.Run("Invalid", func(t *testing.T) { testParamsInvalid(t, h) })
	t.Run("Limit", func(t *testing.T) { testParamsLimit(t, h) })
	t.Run("NoActor", func(t *testing.T) { testParamsNoActor(t, h) })
	t.Run("Guard", func(t *testing.T) { testParamsGuard(t, h) })
	t.Run("ConcurrentLimit", func(t *testing.T) { testParamsConcurrentLimit(t, h) })
}

// paramStore is what the suite needs of a store.
type paramStore interface {
	ledger.TenantParamStore
	ledger.TenantParamLister
}

func (f *fixture) params() paramStore {
	f.t.Helper()
	ps, ok := f.store.(paramStore)
	if !ok {
		f.t.Fatal("store does not implement ledger.TenantParamStore and ledger.TenantParamLister")
	}
	return ps
}

// wantParams fails unless tenant's parameters are exactly want, read both ways.
func (f *fixture) wantParams(tenant string, want map[string]string) {
	f.t.Helper()
	got, err := f.params().TenantParams(f.ctx, tenant)
	if err != nil || got == nil || !maps.Equal(got, want) {
		f.t.Fatalf("TenantParams(%s) = %v, %v; want %v", tenant, got, err, want)
	}
	list, err := f.params().ListTenantParams(f.ctx, tenant)
	if err != nil || len(list) != len(want) {
		f.t.Fatalf("ListTenantParams(%s) = %+v, %v; want %v", tenant, list, err, want)
	}
	for i, p := range list {
		if want[p.Name] != p.Value || (i > 0 && list[i-1].Name >= p.Name) {
			f.t.Fatalf("ListTenantParams(%s) = %+v; want %v by name", tenant, list, want)
		}
	}
}

// updatedAt returns when tenant's parameter name got its value.
func (f *fixture) updatedAt(tenant, name string) time.Time {
	f.t.Helper()
	list, err := f.params().ListTenantParams(f.ctx, tenant)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, p := range list {
		if p.Name == name {
			return p.UpdatedAt
		}
	}
	f.t.Fatalf("%s has no parameter %s", tenant, name)
	return time.Time{}
}

// paramActions returns tenant's parameter actions, oldest first.
func (f *fixture) paramActions(tenant string) []ledger.Action {
	f.t.Helper()
	acts, err := f.store.(ledger.ActionStore).Actions(f.ctx, ledger.ActionFilter{Tenant: tenant})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []ledger.Action
	for i := len(acts) - 1; i >= 0; i-- {
		if a := acts[i]; a.Kind == ledger.ActionTenantParamSet || a.Kind == ledger.ActionTenantParamUnset {
			out = append(out, a)
		}
	}
	return out
}

// wantActions fails unless acts are, in order, kind/name/reason triples
// ("set account first set"), by the fixture's actor.
func wantActions(t *testing.T, acts []ledger.Action, want ...string) {
	t.Helper()
	var got []string
	for _, a := range acts {
		kind := map[ledger.ActionKind]string{ledger.ActionTenantParamSet: "set", ledger.ActionTenantParamUnset: "unset"}[a.Kind]
		got = append(got, kind+" "+a.Object+" "+a.Reason)
		if a.Subject != testActor.Subject || a.Name != testActor.Name || a.Role != testActor.Role || a.OperationID != "" {
			t.Fatalf("action %+v: not by %+v", a, testActor)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("actions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func testParamsSetUnset(t *testing.T, h Harness) {
	f := setup(t, h)
	ps := f.params()
	f.wantParams("acme", map[string]string{})

	first := f.clk.Now()
	if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_123", "region": "eu"}, nil, false); err != nil {
		t.Fatal(err)
	}
	f.wantParams("acme", map[string]string{"account": "acct_123", "region": "eu"})
	if at := f.updatedAt("acme", "account"); !at.Equal(first) {
		t.Fatalf("updated at %v, want %v", at, first)
	}

	// Overwriting (no operations yet) gives a new value and time; the
	// same value again is no change: its time stays, nothing is recorded.
	f.clk.Advance(time.Minute)
	if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_456", "region": "eu"}, nil, false); err != nil {
		t.Fatal(err)
	}
	f.wantParams("acme", map[string]string{"account": "acct_456", "region": "eu"})
	if a, r := f.updatedAt("acme", "account"), f.updatedAt("acme", "region"); !a.Equal(f.clk.Now()) || !r.Equal(first) {
		t.Fatalf("updated at account %v region %v; want %v and %v", a, r, f.clk.Now(), first)
	}

	// Unsetting removes; unsetting what is not there is no change and
	// no error, so that a script may run twice.
	if err := ps.SetTenantParams(f.ctx, "acme", nil, []string{"region", "nope"}, false); err != nil {
		t.Fatal(err)
	}
	f.wantParams("acme", map[string]string{"account": "acct_456"})
	if err := ps.SetTenantParams(f.ctx, "acme", nil, []string{"region", "region"}, false); err != nil {
		t.Fatal(err)
	}
	// Set and unset in one change.
	if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"region": "us"}, []string{"account"}, false); err != nil {
		t.Fatal(err)
	}
	f.wantParams("acme", map[string]string{"region": "us"})

	// One action per parameter changed, naming it and never its value.
	acts := f.paramActions("acme")
	wantActions(t, acts,
		"set account first set", "set region first set",
		"set account changed",
		"unset region removed",
		"set region first set", "unset account removed")
	for _, a := range acts {
		if a.Tenant != "acme" || strings.Contains(a.Object+a.Reason, "acct_") || strings.Contains(a.Reason, "us") {
			t.Fatalf("action %+v names a value", a)
		}
	}
}

func testParamsIsolation(t *testing.T, h Harness) {
	f := setup(t, h)
	ps := f.params()
	if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_acme", "region": "eu"}, nil, false); err != nil {
		t.Fatal(err)
	}
	f.wantParams("globex", map[string]string{})
	if err := ps.SetTenantParams(f.ctx, "globex", map[string]string{"account": "acct_globex"}, nil, false); err != nil {
		t.Fatal(err)
	}
	// globex's unset of a name acme has changes nothing of acme's.
	if err := ps.SetTenantParams(f.ctx, "globex", nil, []string{"region"}, false); err != nil {
		t.Fatal(err)
	}
	f.wantParams("acme", map[string]string{"account": "acct_acme", "region": "eu"})
	f.wantParams("globex", map[string]string{"account": "acct_globex"})
	if got := f.paramActions("globex"); len(got) != 1 || got[0].Object != "account" {
		t.Fatalf("globex's actions %+v", got)
	}
	if got := f.paramActions("acme"); len(got) != 2 {
		t.Fatalf("acme's actions %+v", got)
	}
	// The guard counts the tenant's own operations only.
	f.create("acme")
	if err := ps.SetTenantParams(f.ctx, "globex", map[string]string{"account": "acct_globex_2"}, nil, false); err != nil {
		t.Fatalf("acme's operation blocked globex: %v", err)
	}
	wantCode(t, ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_acme_2"}, nil, false), ledger.EConflict)
}

func testParamsInvalid(t *testing.T, h Harness) {
	f := setup(t, h)
	ps := f.params()
	// The value is recognisable, so that an error that quotes it fails.
	const v = "VALUE_9f3"
	many := map[string]string{}
	for i := range ledger.MaxTenantParams + 1 {
		many[fmt.Sprintf("p%d", i)] = v
	}
	cases := map[string]struct {
		tenant string
		set    map[string]string
		unset  []string
	}{
		"Tenant":          {"Not A Tenant", map[string]string{"account": v}, nil},
		"EmptyTenant":     {"", map[string]string{"account": v}, nil},
		"Nothing":         {"acme", nil, nil},
		"NameUpper":       {"acme", map[string]string{"Account": v}, nil},
		"NameDigit":       {"acme", map[string]string{"1account": v}, nil},
		"NameDash":        {"acme", map[string]string{"stripe-account": v}, nil},
		"NameDot":         {"acme", map[string]string{"tenant.account": v}, nil},
		"NameEmpty":       {"acme", map[string]string{"": v}, nil},
		"NameTooLong":     {"acme", map[string]string{"a" + strings.Repeat("b", 32): v}, nil},
		"NameUnicode":     {"acme", map[string]string{"accöunt": v}, nil},
		"UnsetName":       {"acme", nil, []string{"Bad Name " + v}},
		"ValueEmpty":      {"acme", map[string]string{"account": ""}, nil},
		"ValueTooLong":    {"acme", map[string]string{"account": v + strings.Repeat("x", 257-len(v))}, nil},
		"ValueTooLongMB":  {"acme", map[string]string{"account": v + strings.Repeat("é", 257-len(v))}, nil},
		"ValueLF":         {"acme", map[string]string{"account": v + "\nX-Evil: 1"}, nil},
		"ValueCR":         {"acme", map[string]string{"account": v + "\r"}, nil},
		"ValueTab":        {"acme", map[string]string{"account": v + "\tx"}, nil},
		"ValueNUL":        {"acme", map[string]string{"account": v + "\x00x"}, nil},
		"ValueDEL":        {"acme", map[string]string{"account": v + "\x7fx"}, nil},
		"ValueC1":         {"acme", map[string]string{"account": v + "\u0085x"}, nil},
		"ValueZeroWidth":  {"acme", map[string]string{"account": v + "\u200bx"}, nil},
		"ValueNBSP":       {"acme", map[string]string{"account": v + "\u00a0x"}, nil},
		"ValueLeading":    {"acme", map[string]string{"account": " " + v}, nil},
		"ValueTrailing":   {"acme", map[string]string{"account": v + " "}, nil},
		"ValueBadUTF8":    {"acme", map[string]string{"account": v + "\xff"}, nil},
		"SetAndUnset":     {"acme", map[string]string{"account": v}, []string{"account"}},
		"TooManySet":      {"acme", many, nil},
		"TooManyUnset":    {"acme", nil, append(strings.Fields(strings.Repeat("x ", ledger.MaxTenantParams)), "y")},
		"OneBadAmongGood": {"acme", map[string]string{"account": v, "region": ""}, nil},
	}
	for name, c := range cases {
		err := ps.SetTenantParams(f.ctx, c.tenant, c.set, c.unset, true)
		wantCode(t, err, ledger.EInvalid)
		if strings.Contains(err.Error(), v) || strings.Contains(ledger.ErrorMessage(err), v) {
			t.Fatalf("%s: error %q quotes the value", name, err)
		}
	}
	f.wantParams("acme", map[string]string{})
	if acts := f.paramActions("acme"); len(acts) != 0 {
		t.Fatalf("refused changes recorded %+v", acts)
	}
	_, err := ps.TenantParams(f.ctx, "Not A Tenant")
	wantCode(t, err, ledger.EInvalid)
	_, err = ps.ListTenantParams(f.ctx, "")
	wantCode(t, err, ledger.EInvalid)

	// The edges that are valid: 256 characters (in bytes, more), inner
	// spaces, punctuation and letters beyond ASCII; a 32-character name.
	ok := map[string]string{
		"a" + strings.Repeat("_", 31): strings.Repeat("x", 256),
		"wide":                        strings.Repeat("é", 256),
		"spaced":                      "Acme GmbH & Co. KG",
		"z9":                          "acct_1Nv0FGQ9RKHgCVdK",
	}
	if err := ps.SetTenantParams(f.ctx, "acme", ok, nil, false); err != nil {
		t.Fatal(err)
	}
	f.wantParams("acme", ok)
}

func testParamsLimit(t *testing.T, h Harness) {
	f := setup(t, h)
	ps := f.params()
	full := map[string]string{}
	for i := range ledger.MaxTenantParams {
		full[fmt.Sprintf("p%d", i)] = "v"
	}
	if err := ps.SetTenantParams(f.ctx, "acme", full, nil, false); err != nil {
		t.Fatal(err)
	}
	wantCode(t, ps.SetTenantParams(f.ctx, "acme", map[string]string{"one_more": "v"}, nil, false), ledger.EInvalid)
	f.wantParams("acme", full)
	// Replacing one keeps the count: allowed.
	if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"one_more": "v"}, []string{"p0"}, false); err != nil {
		t.Fatal(err)
	}
	// The limit is per tenant.
	if err := ps.SetTenantParams(f.ctx, "globex", map[string]string{"one_more": "v"}, nil, false); err != nil {
		t.Fatal(err)
	}
}

func testParamsNoActor(t *testing.T, h Harness) {
	f := setup(t, h)
	ps := f.params()
	wantCode(t, ps.SetTenantParams(context.Background(), "acme", map[string]string{"account": "acct_1"}, nil, false), ledger.EInvalid)
	f.wantParams("acme", map[string]string{})
	bad := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "nobody"})
	wantCode(t, ps.SetTenantParams(bad, "acme", map[string]string{"account": "acct_1"}, nil, false), ledger.EInvalid)
	f.wantParams("acme", map[string]string{})
	if acts := f.paramActions("acme"); len(acts) != 0 {
		t.Fatalf("actions %+v", acts)
	}
}

func testParamsGuard(t *testing.T, h Harness) {
	for _, s := range ledger.UnfinishedStates() {
		t.Run(string(s), func(t *testing.T) {
			f := setup(t, h)
			ps := f.params()
			if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_old", "region": "eu"}, nil, false); err != nil {
				t.Fatal(err)
			}
			f.inState("acme", s)

			// Changing or removing a value is refused, with why, naming
			// the parameters but not the values.
			for _, c := range []struct {
				set   map[string]string
				unset []string
			}{
				{map[string]string{"account": "acct_new"}, nil},
				{nil, []string{"account"}},
				{map[string]string{"account": "acct_new", "fresh": "x"}, nil}, // the whole change is refused
				{map[string]string{"fresh": "x"}, []string{"region"}},
			} {
				err := ps.SetTenantParams(f.ctx, "acme", c.set, c.unset, false)
				wantCode(t, err, ledger.EConflict)
				msg := ledger.ErrorMessage(err)
				if !strings.Contains(msg, "1 operation not yet final") || strings.Contains(msg, "acct_") ||
					!strings.Contains(msg, "idempotency") || !strings.Contains(msg, "force") {
					t.Fatalf("refusal %q: want the count, why and the way out, no value", msg)
				}
			}
			f.wantParams("acme", map[string]string{"account": "acct_old", "region": "eu"})

			// A first value, and the same value again, are allowed.
			if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_old", "fresh": "x"}, []string{"absent"}, false); err != nil {
				t.Fatalf("first set refused: %v", err)
			}
			// Forced, the change is made and its actions say so.
			if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_new", "other": "y"}, []string{"region"}, true); err != nil {
				t.Fatal(err)
			}
			f.wantParams("acme", map[string]string{"account": "acct_new", "fresh": "x", "other": "y"})
			const forced = ", forced with 1 operation not yet final"
			wantActions(t, f.paramActions("acme"),
				"set account first set", "set region first set",
				"set fresh first set",
				"set account changed"+forced, "set other first set", "unset region removed"+forced)
		})
	}
	t.Run("FinalStatesOnly", func(t *testing.T) {
		f := setup(t, h)
		ps := f.params()
		if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_old"}, nil, false); err != nil {
			t.Fatal(err)
		}
		f.inState("acme", ledger.Succeeded)
		f.inState("acme", ledger.FailedTerminal)
		// force with nothing unfinished is no forcing: not recorded as one.
		if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_new"}, nil, true); err != nil {
			t.Fatal(err)
		}
		if err := ps.SetTenantParams(f.ctx, "acme", nil, []string{"account"}, false); err != nil {
			t.Fatal(err)
		}
		wantActions(t, f.paramActions("acme"), "set account first set", "set account changed", "unset account removed")
	})
	t.Run("Count", func(t *testing.T) {
		f := setup(t, h)
		ps := f.params()
		if err := ps.SetTenantParams(f.ctx, "acme", map[string]string{"account": "acct_old"}, nil, false); err != nil {
			t.Fatal(err)
		}
		f.create("acme")
		f.create("acme")
		f.inState("acme", ledger.Escalated)
		f.inState("acme", ledger.Succeeded)
		err := ps.SetTenantParams(f.ctx, "acme", nil, []string{"account"}, false)
		if !strings.Contains(ledger.ErrorMessage(err), "3 operations not yet final") {
			t.Fatalf("refusal %v: want 3 operations counted", err)
		}
	})
}

// Two replicas adding a parameter each to a tenant one short of the limit
// at once: one wins, the other is refused, the limit holds.
func testParamsConcurrentLimit(t *testing.T, h Harness) {
	f := setup(t, h)
	ps := f.params()
	full := map[string]string{}
	for i := range ledger.MaxTenantParams - 1 {
		full[fmt.Sprintf("p%d", i)] = "v"
	}
	if err := ps.SetTenantParams(f.ctx, "acme", full, nil, false); err != nil {
		t.Fatal(err)
	}
	other := f.store
	if h.Sibling != nil {
		other = h.Sibling(t, f.store, f.clk.Now)
	}
	for round := range 5 {
		var (
			wg   sync.WaitGroup
			errs [2]error
		)
		start := make(chan struct{})
		for i, s := range []ledger.Store{f.store, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				name := fmt.Sprintf("r%d_%d", round, i)
				errs[i] = s.(ledger.TenantParamStore).SetTenantParams(f.ctx, "acme", map[string]string{name: "v"}, nil, false)
			}()
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch ledger.ErrorCode(err) {
			case "":
				ok++
			case ledger.EInvalid:
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		got, err := ps.TenantParams(f.ctx, "acme")
		if err != nil || ok != 1 || len(got) != ledger.MaxTenantParams {
			t.Fatalf("round %d: %d succeeded, %d parameters (%v); want 1 and %d", round, ok, len(got), err, ledger.MaxTenantParams)
		}
		// Make room for the next round.
		for name := range got {
			if strings.HasPrefix(name, "r") {
				if err := ps.SetTenantParams(f.ctx, "acme", nil, []string{name}, false); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
