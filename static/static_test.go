package static

import (
	"strings"
	"testing"
)

func TestURLAndLookup(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"style.css", "console.js"} {
		u := URL(name)
		hashed := strings.TrimPrefix(u, "/static/")
		a, ok := Lookup(hashed)
		if !ok || a.Name != name || len(a.Body) == 0 || a.ContentType == "application/octet-stream" {
			t.Fatalf("Lookup(%q) = %+v, %v", hashed, a, ok)
		}
		stale := strings.Replace(hashed, ".", ".0", 1)
		if _, ok := Lookup(stale); ok {
			t.Fatalf("a wrong hash %q was served", stale)
		}
	}
	for _, bad := range []string{"style.css", "../static.go", "x.y", ""} {
		if _, ok := Lookup(bad); ok {
			t.Fatalf("Lookup(%q) found something", bad)
		}
	}
}
