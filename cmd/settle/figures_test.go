package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite"
)

// `settle figures --days N --csv` prints exactly what the console's
// /figures.csv serves for the same window: ledger.Figures over whole UTC
// days (from the rollups) written by ledger.WriteFiguresCSV.
func TestFigures_DaysIsTheConsoleCSV(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, to := range []ledger.State{ledger.Unknown, ledger.Unknown, ledger.Escalated, ledger.Succeeded} {
		op, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "inv-" + string(rune('a'+i)),
			Target: "payments", Payload: []byte(`{"amount":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		if op, err = s.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute); err != nil {
			t.Fatal(err)
		}
		o := ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: op.Fence, From: ledger.InFlight, To: ledger.Unknown,
			Actor: ledger.ActorExecutor, Reason: "timeout"}
		if _, err := s.Record(ctx, o); err != nil {
			t.Fatal(err)
		}
		if to != ledger.Unknown {
			o.From, o.To, o.RemoteRef = ledger.Unknown, to, "ch_"+op.ID[:8]
			if _, err := s.Record(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := exec.Command(binary, "figures", "--tenant", "acme", "--days", "7", "--csv", "--database-url", "sqlite:"+path).Output()
	if err != nil {
		t.Fatalf("figures: %v", err)
	}
	f, err := ledger.Figures(ctx, s, "acme", ledger.DaysEnding(time.Now(), 7))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := ledger.WriteFiguresCSV(&want, f); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want.Bytes()) || f.Targets[0].Resolved != 2 || f.OpenEscalations != 1 {
		t.Fatalf("settle figures --days 7 --csv:\n%s\nwant:\n%s", out, want.Bytes())
	}

	// --from/--to is the console's ?from=…&to=…: a window ending today
	// counts the history, one ending yesterday counts none of it.
	today := time.Now().UTC()
	for _, c := range []struct {
		from, to string
		resolved int
	}{
		{today.AddDate(0, 0, -3).Format(time.DateOnly), today.Format(time.DateOnly), 2},
		{today.AddDate(0, 0, -3).Format(time.DateOnly), today.AddDate(0, 0, -1).Format(time.DateOnly), 0},
	} {
		out, err := exec.Command(binary, "figures", "--tenant", "acme", "--from", c.from, "--to", c.to, "--csv",
			"--database-url", "sqlite:"+path).Output()
		if err != nil {
			t.Fatalf("figures --from %s --to %s: %v", c.from, c.to, err)
		}
		w, err := ledger.DatesEnding(c.from, c.to, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		f, err := ledger.Figures(ctx, s, "acme", w)
		if err != nil {
			t.Fatal(err)
		}
		resolved := 0
		for _, tf := range f.Targets {
			resolved += tf.Resolved
		}
		var want bytes.Buffer
		if err := ledger.WriteFiguresCSV(&want, f); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, want.Bytes()) || resolved != c.resolved {
			t.Fatalf("settle figures --from %s --to %s --csv (%d resolved, want %d):\n%s\nwant:\n%s",
				c.from, c.to, resolved, c.resolved, out, want.Bytes())
		}
	}
	if err := exec.Command(binary, "figures", "--tenant", "acme", "--from", "2001-01-01", "--to", "2001-01-02",
		"--days", "7", "--database-url", "sqlite:"+path).Run(); err == nil {
		t.Fatal("--days with --from was accepted")
	}
}
