package sqlfilter

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

var testDialect = Dialect{
	Placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
	UUIDCast:    "::uuid",
	State:       func(s ledger.State) string { return "state = '" + string(s) + "'" },
	TenantArray: true,
	ILike:       "ILIKE",
	Awaiting:    func(p string) string { return "awaiting(" + p + ")" },
}

func TestExpand(t *testing.T) {
	const walk = `SELECT x FROM (/* TEMPLATE_BEGIN: walk */ (SELECT x FROM t /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */` +
		` ORDER BY a /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */ LIMIT $1) /* TEMPLATE_END */) AS q` +
		` ORDER BY a /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */ LIMIT $1`
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ref := Arg{Name: "ref", V: "r-1"}
	cases := []struct {
		name     string
		sql      string
		blocks   Blocks
		want     string
		wantArgs []any
	}{
		{name: "NoConditions", sql: "SELECT 1 FROM t /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */ LIMIT $1",
			blocks: Blocks{"where": Where()}, want: "SELECT 1 FROM t  LIMIT $1", wantArgs: []any{51}},
		{name: "NumberedAfterSqlcArgs", sql: "SELECT 1 FROM t /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */ LIMIT $1",
			blocks: Blocks{"where": Where(Tenants([]string{"a"}), StateIs(ledger.Escalated),
				Keyset("<", Arg{Name: "at", V: at}, Arg{Name: "id", V: "0a", UUID: true}))},
			want:     "SELECT 1 FROM t WHERE tenant_id = $2 AND state = 'ESCALATED' AND (created_at, operation_id) < ($3, $4::uuid) LIMIT $1",
			wantArgs: []any{51, "a", at, "0a"}},
		{name: "OneArgPerName", sql: "/* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */",
			blocks:   Blocks{"where": Where(Or(Eq("intent_ref", ref), LowerEq("intent_ref", ref)), Tenants([]string{"a", "b"}))},
			want:     "WHERE (intent_ref = $2 OR lower(intent_ref) = lower($2)) AND tenant_id = ANY($3::text[])",
			wantArgs: []any{51, "r-1", []string{"a", "b"}}},
		{name: "RepeatWithNestedBlocks", sql: walk,
			blocks: Blocks{"dir": Text("DESC"), "walk": Repeat("UNION ALL",
				Blocks{"where": Where(StateIs(ledger.Escalated))},
				Blocks{"where": Where(StateIs(ledger.Unknown), Cmp("deadline", "<=", Arg{Name: "now", V: at}))})},
			want: "SELECT x FROM ((SELECT x FROM t WHERE state = 'ESCALATED' ORDER BY a DESC LIMIT $1)\n\tUNION ALL " +
				"(SELECT x FROM t WHERE state = 'UNKNOWN' AND deadline <= $2 ORDER BY a DESC LIMIT $1)) AS q ORDER BY a DESC LIMIT $1",
			wantArgs: []any{51, at}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, args, err := Expand(&testDialect, c.sql, []any{51}, c.blocks)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			if !reflect.DeepEqual(args, c.wantArgs) {
				t.Errorf("args %v, want %v", args, c.wantArgs)
			}
		})
	}
}

func TestExpand_Errors(t *testing.T) {
	for name, sql := range map[string]string{
		"NoBlockGiven": "SELECT 1 /* TEMPLATE_BEGIN: other */ x /* TEMPLATE_END */",
		"Unterminated": "SELECT 1 /* TEMPLATE_BEGIN: where */ WHERE true",
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := Expand(&testDialect, sql, nil, Blocks{"where": Where()}); err == nil {
				t.Fatal("no error")
			}
		})
	}
	t.Run("RepeatOfNothing", func(t *testing.T) {
		_, _, err := Expand(&testDialect, "/* TEMPLATE_BEGIN: walk */ x /* TEMPLATE_END */", nil, Blocks{"walk": Repeat("UNION")})
		if err == nil || !strings.Contains(err.Error(), "repeat") {
			t.Fatalf("err = %v", err)
		}
	})
}

// The search's passes hold only the look-ups the reference can be: an
// id's two only for an id, the prefix range only for a prefix.
func TestSearch_Branches(t *testing.T) {
	const id = "0a1b2c3d-0000-4000-8000-000000000001"
	const sql = "/* TEMPLATE_BEGIN: branch */ SELECT x FROM t /* TEMPLATE_BEGIN: hint */ /* TEMPLATE_END */ " +
		"/* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */ /* TEMPLATE_END */"
	for _, c := range []struct {
		name string
		ref  string
		near bool
		n    int
	}{{"Text", "r-1", false, 3}, {"ID", id, false, 5}, {"NearText", "r-1", true, 1}, {"NearPrefix", "0a1b2c3d", true, 2}} {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := Expand(&testDialect, sql, nil, Search(c.ref, []string{"a"}, false, c.near))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(got, "SELECT x"); n != c.n {
				t.Errorf("%d branches, want %d:\n%s", n, c.n, got)
			}
		})
	}
}
