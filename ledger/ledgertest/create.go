package ledgertest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"settle/ledger"
)

func testCreate(t *testing.T, h Harness) {
	// The creation event names the request that caused it, when the
	// context carries a plain request id, and only then.
	t.Run("RequestID", func(t *testing.T) {
		f := setup(t, h)
		for _, c := range []struct{ id, want string }{
			{"req-7f3a-01", `{"request_id": "req-7f3a-01"}`},
			{"", `{}`},
			{"not plain\n", `{}`},
		} {
			ctx := f.ctx
			if c.id != "" {
				ctx = ledger.NewContextWithRequestID(ctx, c.id)
			}
			op, created, err := f.store.Create(ctx, f.newOp("acme"))
			if err != nil || !created {
				t.Fatalf("create: %v %v", created, err)
			}
			evs, err := f.store.Events(f.ctx, "acme", op.ID)
			if err != nil || len(evs) != 1 {
				t.Fatalf("events: %+v %v", evs, err)
			}
			var got, want map[string]any
			if err := json.Unmarshal(evs[0].Evidence, &got); err != nil {
				t.Fatalf("evidence %s: %v", evs[0].Evidence, err)
			}
			_ = json.Unmarshal([]byte(c.want), &want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("request id %q: creation evidence %s, want %s", c.id, evs[0].Evidence, c.want)
			}
		}
	})
	t.Run("New", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		n.Payload = []byte(`{ "currency":"EUR",  "amount": 5000, "meta": {"b": 2, "a": 1} }`)
		deadline := f.clk.Now().Add(time.Hour)
		n.Deadline = &deadline
		op, created, err := f.store.Create(f.ctx, n)
		if err != nil || !created {
			t.Fatalf("created=%v err=%v", created, err)
		}
		if op.State != ledger.Prepared || op.Fence != 0 || op.Attempts != 0 || op.LeaseExpiresAt != nil {
			t.Fatalf("new operation = %+v", op)
		}
		for _, id := range []string{op.ID, op.RemoteKey} {
			u, err := uuid.Parse(id)
			if err != nil || u.Version() != 4 {
				t.Fatalf("identifier %q is not a random UUID: %v", id, err)
			}
		}
		if op.ID == op.RemoteKey {
			t.Fatal("operation id and remote key must be independent")
		}
		want := `{"amount":5000,"currency":"EUR","meta":{"a":1,"b":2}}`
		if string(op.Payload) != want {
			t.Fatalf("stored payload = %s, want canonical %s", op.Payload, want)
		}
		sum := sha256.Sum256([]byte(want))
		if string(op.PayloadHash) != string(sum[:]) {
			t.Fatal("payload hash is not SHA-256 of the canonical bytes")
		}
		if !op.RetryWindowEnd.Equal(f.clk.Now().Add(24*time.Hour)) || op.Deadline == nil || !op.Deadline.Equal(deadline) {
			t.Fatalf("retry window end %v, deadline %v", op.RetryWindowEnd, op.Deadline)
		}
		sameOp(t, op, f.get(op))
		evs, err := f.store.Events(f.ctx, op.Tenant, op.ID)
		if err != nil || len(evs) != 1 || evs[0].From != "" || evs[0].To != ledger.Prepared {
			t.Fatalf("events = %+v, %v", evs, err)
		}
	})

	t.Run("SameIntentSamePayload", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		n.Payload = []byte(`{"amount":100,"currency":"EUR","lines":[1,2]}`)
		first, _, err := f.store.Create(f.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		// Reordered keys, other whitespace, a later clock: the same intent.
		f.clk.Advance(time.Minute)
		n.Payload = []byte("{\n  \"lines\": [1, 2],\n  \"currency\": \"EUR\",\n  \"amount\": 100\n}")
		again, created, err := f.store.Create(f.ctx, n)
		if err != nil || created {
			t.Fatalf("created=%v err=%v", created, err)
		}
		sameOp(t, first, again)
		if n, _ := f.store.PayloadConflicts(f.ctx, "acme", ledger.Since(time.Time{})); n != 0 {
			t.Fatalf("payload conflicts = %d, want 0", n)
		}
	})

	t.Run("SameIntentChangedPayload", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		n.Payload = []byte(`{"amount":50,"currency":"EUR"}`)
		first, _, err := f.store.Create(f.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		n.Payload = []byte(`{"amount":40,"currency":"EUR"}`) // the edited amount
		_, created, err := f.store.Create(f.ctx, n)
		wantCode(t, err, ledger.EPayloadConflict)
		if created || strings.Contains(err.Error(), "40") {
			t.Fatalf("created=%v, message %q must not quote the payload", created, err)
		}
		sameOp(t, first, f.get(first))
		if c, _ := f.store.PayloadConflicts(f.ctx, "acme", ledger.Since(time.Time{})); c != 1 {
			t.Fatalf("payload conflicts = %d, want 1", c)
		}
		// Nothing can send the changed payload: a claim with its hash fails
		// and the original stays PREPARED.
		_, changedHash, _ := ledger.Canonicalize(n.Payload)
		_, err = f.store.Claim(f.ctx, first.Tenant, first.ID, changedHash, time.Minute)
		wantCode(t, err, ledger.EPayloadConflict)
		sameOp(t, first, f.get(first))
	})

	// A contract's reference field: the remote key is written into the
	// payload before hashing, and a retried creation still matches.
	t.Run("BoundReference", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		n.Payload = []byte(`{"amount":7,"metadata":{"note":"x"}}`)
		n.Bind = func(p []byte, key, tenant string) ([]byte, error) {
			var m map[string]any
			if err := json.Unmarshal(p, &m); err != nil {
				return nil, err
			}
			m["metadata"].(map[string]any)["ref"] = key
			m["metadata"].(map[string]any)["tenant"] = tenant
			return json.Marshal(m)
		}
		op, _, err := f.store.Create(f.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"amount":7,"metadata":{"note":"x","ref":"` + op.RemoteKey + `","tenant":"acme"}}`
		if string(op.Payload) != want {
			t.Fatalf("payload %s, want %s", op.Payload, want)
		}
		again, created, err := f.store.Create(f.ctx, n)
		if err != nil || created || again.ID != op.ID {
			t.Fatalf("retry: created=%v err=%v", created, err)
		}
		n.Payload = []byte(`{"amount":8,"metadata":{"note":"x"}}`)
		_, _, err = f.store.Create(f.ctx, n)
		wantCode(t, err, ledger.EPayloadConflict)
	})

	// Amounts are never changed: RFC 8785 holds numbers as doubles, so a
	// number a double cannot hold exactly is refused, not rounded, and a
	// retry that differs from the stored amount only beyond a double's
	// precision is not taken for the same request.
	t.Run("InexactNumber", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		n.Payload = []byte(`{"amount":9007199254740993,"currency":"EUR"}`)
		_, created, err := f.store.Create(f.ctx, n)
		wantCode(t, err, ledger.EInvalid)
		if created || !strings.Contains(ledger.ErrorMessage(err), "payload.amount") {
			t.Fatalf("created=%v, message %q must name payload.amount", created, ledger.ErrorMessage(err))
		}
		n.Payload = []byte(`{"amount":9007199254740992,"currency":"EUR"}`)
		first, created, err := f.store.Create(f.ctx, n)
		if err != nil || !created || !strings.Contains(string(first.Payload), "9007199254740992") {
			t.Fatalf("exact amount: created=%v err=%v", created, err)
		}
		n.Payload = []byte(`{"amount":9007199254740993,"currency":"EUR"}`)
		again, created, err := f.store.Create(f.ctx, n)
		wantCode(t, err, ledger.EInvalid)
		if created || again.ID == first.ID {
			t.Fatal("a retry with another amount was taken for the stored operation")
		}
		sameOp(t, first, f.get(first))
	})

	t.Run("SameIntentOtherTarget", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		if _, _, err := f.store.Create(f.ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Target = "other"
		_, _, err := f.store.Create(f.ctx, n)
		wantCode(t, err, ledger.EPayloadConflict)
	})

	t.Run("IntentIsScopedByTenantAndType", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		a, _, _ := f.store.Create(f.ctx, n)
		n.Tenant = "globex"
		b, created, err := f.store.Create(f.ctx, n)
		if err != nil || !created || b.ID == a.ID || b.RemoteKey == a.RemoteKey {
			t.Fatalf("other tenant, same intent: created=%v err=%v", created, err)
		}
		n.Tenant, n.Type = "acme", "refund"
		c, created, err := f.store.Create(f.ctx, n)
		if err != nil || !created || c.ID == a.ID {
			t.Fatalf("other type, same intent: created=%v err=%v", created, err)
		}
	})

	// Control 11: two identical-looking actions with different intents are
	// two operations and both are sent.
	t.Run("LegitimateRepeat", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		a, _, _ := f.store.Create(f.ctx, n)
		n.IntentRef += "-second-purchase"
		b, created, err := f.store.Create(f.ctx, n)
		if err != nil || !created || a.ID == b.ID || string(a.PayloadHash) != string(b.PayloadHash) {
			t.Fatalf("second purchase: created=%v err=%v", created, err)
		}
		claimed, err := f.store.ClaimBatch(f.ctx, 10, time.Minute)
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claimed %d, err %v; want both", len(claimed), err)
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		f := setup(t, h)
		past := f.clk.Now().Add(-time.Second)
		for name, mutate := range map[string]func(*ledger.NewOperation){
			"EmptyTenant":    func(n *ledger.NewOperation) { n.Tenant = "" },
			"BadTenant":      func(n *ledger.NewOperation) { n.Tenant = "Acme Corp" },
			"EmptyType":      func(n *ledger.NewOperation) { n.Type = "" },
			"EmptyIntent":    func(n *ledger.NewOperation) { n.IntentRef = "" },
			"LongIntent":     func(n *ledger.NewOperation) { n.IntentRef = strings.Repeat("x", 257) },
			"EmptyTarget":    func(n *ledger.NewOperation) { n.Target = "" },
			"NoPayload":      func(n *ledger.NewOperation) { n.Payload = nil },
			"ArrayPayload":   func(n *ledger.NewOperation) { n.Payload = []byte(`[1,2]`) },
			"StringPayload":  func(n *ledger.NewOperation) { n.Payload = []byte(`"x"`) },
			"BrokenJSON":     func(n *ledger.NewOperation) { n.Payload = []byte(`{"a":`) },
			"TrailingJSON":   func(n *ledger.NewOperation) { n.Payload = []byte(`{"a":1} {}`) },
			"PastDeadline":   func(n *ledger.NewOperation) { n.Deadline = &past },
			"NegativeWindow": func(n *ledger.NewOperation) { n.RetryWindow = -time.Second },
		} {
			t.Run(name, func(t *testing.T) {
				n := f.newOp("acme")
				mutate(&n)
				_, created, err := f.store.Create(f.ctx, n)
				wantCode(t, err, ledger.EInvalid)
				if created {
					t.Fatal("created")
				}
			})
		}
		if ops, err := f.store.ClaimBatch(f.ctx, 100, time.Minute); err != nil || len(ops) != 0 {
			t.Fatalf("invalid creations left %d operations (%v)", len(ops), err)
		}
	})

	// References are text a person can read: valid UTF-8 in NFC, with no
	// control, format or separator characters, limits in characters.
	t.Run("ReferenceText", func(t *testing.T) {
		f := setup(t, h)
		for name, mutate := range map[string]func(*ledger.NewOperation){
			"IntentTooManyCharacters": func(n *ledger.NewOperation) { n.IntentRef = strings.Repeat("é", 257) },
			"IntentNotUTF8":           func(n *ledger.NewOperation) { n.IntentRef = "approval-\xff" },
			"IntentNotNFC":            func(n *ledger.NewOperation) { n.IntentRef = "cafe\u0301" },
			"IntentNewline":           func(n *ledger.NewOperation) { n.IntentRef = "approval-1\nforged line" },
			"IntentTerminalEscape":    func(n *ledger.NewOperation) { n.IntentRef = "\x1b[31mapproval" },
			"IntentNUL":               func(n *ledger.NewOperation) { n.IntentRef = "approval\x00" },
			"IntentFormatCharacter":   func(n *ledger.NewOperation) { n.IntentRef = "appro\u200bval" },
			"IntentBidiOverride":      func(n *ledger.NewOperation) { n.IntentRef = "approval-\u202e1" },
			"IntentLineSeparator":     func(n *ledger.NewOperation) { n.IntentRef = "approval\u2028x" },
			"TypeNewline":             func(n *ledger.NewOperation) { n.Type = "charge\n" },
			"TypeTooLong":             func(n *ledger.NewOperation) { n.Type = strings.Repeat("c", 129) },
		} {
			t.Run(name, func(t *testing.T) {
				n := f.newOp("acme")
				mutate(&n)
				_, created, err := f.store.Create(f.ctx, n)
				wantCode(t, err, ledger.EInvalid)
				if created {
					t.Fatal("created")
				}
			})
		}
		// Limits count characters, not bytes: 256 two-byte characters fit.
		n := f.newOp("acme")
		n.IntentRef = strings.Repeat("é", 256)
		op, created, err := f.store.Create(f.ctx, n)
		if err != nil || !created || op.IntentRef != n.IntentRef {
			t.Fatalf("256-character intent_ref: created=%v err=%v", created, err)
		}
		if ops, err := f.store.ClaimBatch(f.ctx, 100, time.Minute); err != nil || len(ops) != 1 || ops[0].ID != op.ID {
			t.Fatalf("invalid creations left %d operations besides the valid one (%v)", len(ops)-1, err)
		}
	})
}

func testRead(t *testing.T, h Harness) {
	t.Run("NotFound", func(t *testing.T) {
		f := setup(t, h)
		op := f.create("acme")
		for name, id := range map[string][2]string{
			"Missing":     {"acme", uuid.NewString()},
			"OtherTenant": {"globex", op.ID},
			"NotAUUID":    {"acme", "'; DROP TABLE operation_ledger; --"},
		} {
			_, err := f.store.Get(f.ctx, id[0], id[1])
			wantCode(t, err, ledger.ENotFound)
			_, err = f.store.Events(f.ctx, id[0], id[1])
			wantCode(t, err, ledger.ENotFound)
			_ = name
		}
		_, err := f.store.GetByIntent(f.ctx, "globex", op.Type, op.IntentRef)
		wantCode(t, err, ledger.ENotFound)
		got, err := f.store.GetByIntent(f.ctx, "acme", op.Type, op.IntentRef)
		if err != nil || got.ID != op.ID {
			t.Fatalf("by intent: %v", err)
		}
	})

	t.Run("FindByAnyReference", func(t *testing.T) {
		f := setup(t, h)
		op := f.claim("acme")
		op = f.record(op, ledger.InFlight, ledger.Succeeded)
		other := f.create("acme")
		for name, ref := range map[string]string{
			"ID": op.ID, "Intent": op.IntentRef, "RemoteKey": op.RemoteKey, "RemoteRef": op.RemoteRef,
		} {
			ops, err := f.store.Find(f.ctx, "acme", ref)
			if err != nil || len(ops) != 1 || ops[0].ID != op.ID {
				t.Fatalf("find by %s: %d results, %v", name, len(ops), err)
			}
			if ops, _ := f.store.Find(f.ctx, "globex", ref); len(ops) != 0 {
				t.Fatalf("find by %s leaked across tenants", name)
			}
		}
		if ops, _ := f.store.Find(f.ctx, "acme", "nothing"); len(ops) != 0 {
			t.Fatal("found something for an unknown reference")
		}
		_ = other
	})

	// Both stores answer alike: an id in upper or mixed case names the same
	// operation (PostgreSQL's uuid type reads it, SQLite compares text);
	// other spellings of a UUID name none on either; lookup text that no
	// reference can hold is refused, not sent to the database.
	t.Run("NormalisedIds", func(t *testing.T) {
		f := setup(t, h)
		op := f.create("acme")
		for _, id := range []string{strings.ToUpper(op.ID), strings.ToUpper(op.ID[:8]) + op.ID[8:]} {
			got, err := f.store.Get(f.ctx, "acme", id)
			if err != nil || got.ID != op.ID {
				t.Fatalf("Get(%s) = %q, %v; want %s", id, got.ID, err, op.ID)
			}
			if got, err := f.store.Summary(f.ctx, "acme", id); err != nil || got.ID != op.ID {
				t.Fatalf("Summary(%s) = %q, %v; want %s", id, got.ID, err, op.ID)
			}
			if evs, err := f.store.Events(f.ctx, "acme", id); err != nil || len(evs) != 1 || evs[0].OperationID != op.ID {
				t.Fatalf("Events(%s) = %d events, %v", id, len(evs), err)
			}
			if ops, err := f.store.Find(f.ctx, "acme", id); err != nil || len(ops) != 1 || ops[0].ID != op.ID {
				t.Fatalf("Find(%s) = %d operations, %v", id, len(ops), err)
			}
		}
		if ops, err := f.store.Find(f.ctx, "acme", strings.ToUpper(op.RemoteKey)); err != nil || len(ops) != 1 {
			t.Fatalf("Find(upper-case remote key) = %d operations, %v", len(ops), err)
		}
		for _, id := range []string{"{" + op.ID + "}", "urn:uuid:" + op.ID, strings.ReplaceAll(op.ID, "-", ""), "\x00", "\xff"} {
			_, err := f.store.Get(f.ctx, "acme", id)
			wantCode(t, err, ledger.ENotFound)
			_, err = f.store.Summary(f.ctx, "acme", id)
			wantCode(t, err, ledger.ENotFound)
			_, err = f.store.Events(f.ctx, "acme", id)
			wantCode(t, err, ledger.ENotFound)
		}
		for _, ref := range []string{"approval\x00", "\xff", strings.Repeat("x", ledger.MaxIntentRef+1)} {
			_, err := f.store.Find(f.ctx, "acme", ref)
			wantCode(t, err, ledger.EInvalid)
		}
	})
}
