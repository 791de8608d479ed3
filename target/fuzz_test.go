package target

import (
	"os"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, and any
// Set it returns must be usable. The committed corpus is in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	full, err := os.ReadFile("testdata/contracts.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	f.Add([]byte(base))
	f.Add([]byte(edit("    outcomes: [{status: 4xx, outcome: unknown}, {status: 201, outcome: succeeded}]\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if (s == nil) == (err == nil) {
			t.Fatalf("Parse returned set %v and error %v", s != nil, err)
		}
		if s == nil {
			return
		}
		for _, name := range s.Names() {
			c, ok := s.Get(name)
			if !ok {
				t.Fatalf("Names lists %q but Get misses it", name)
			}
			for _, code := range []int{200, 201, 404, 500, 503} {
				_ = c.Classify(code)
				_ = c.Cites(code)
			}
			_ = c.Classes()
			_, _ = c.CreateURL()
			_, _, _ = c.LookupURL("a&b/c d", "..")
			_, _, _ = c.CreateBody([]byte(`{"amount":1,"items":[{"a":true}]}`), map[string]string{"account": "acct_1"})
			_ = c.Mismatches([]byte(`{"amount":1}`), []byte(`{"amount":"1.0"}`))
			_ = c.String()
			_, _ = c.Completed([]byte(`{"id":"x","status":"succeeded"}`))
			_, _ = c.ExpectedVersion([]byte(`{"version":"1"}`))
		}
	})
}
