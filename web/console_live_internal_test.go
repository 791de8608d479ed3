package web

import (
	"net/http"
	"testing"
)

// Every live page is a GET route of the table: a path misspelt in
// livePaths would leave its page silently static.
func TestLivePaths_AreRoutes(t *testing.T) {
	routes := map[string]bool{}
	for _, r := range ConsoleRoutes() {
		if r.Method == http.MethodGet && !r.Public {
			routes[r.Path] = true
		}
	}
	for path := range livePaths {
		if !routes[path] {
			t.Errorf("live path %s is no GET route of the console", path)
		}
	}
}

func TestNavCount(t *testing.T) {
	for _, tc := range []struct {
		n            int
		more         bool
		badge, words string
	}{
		{0, false, "", ""},
		{3, false, "3", "3 awaiting your approval"},
		{99, true, "99+", "more than 99 awaiting your approval"},
	} {
		if b, w := navCount(tc.n, tc.more, "awaiting your approval"); b != tc.badge || w != tc.words {
			t.Errorf("navCount(%d, %v) = %q, %q; want %q, %q", tc.n, tc.more, b, w, tc.badge, tc.words)
		}
	}
}
