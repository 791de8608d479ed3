package auth_test

import (
	"net/http"
	"strings"
	"testing"

	"settle/auth/oidctest"
)

// People whose provider answers with text settle cannot store: a NUL in
// the subject (PostgreSQL refuses it in text), a NUL and a cut character
// in the display name.
var (
	nulSubject = oidctest.User{Subject: "mal\x00lory-sub", Name: "Mallory", Email: "m@example.com", Groups: []string{"settle-support"}}
	nulName    = oidctest.User{Subject: "nul-name-sub", Name: "Nul\x00x" + strings.Repeat("é", 150), Email: "n\x00@example.com",
		Groups: []string{"settle-support"}}
)

// A subject that is not plain text (ledger.CheckProviderText) is refused
// with the sign-in page's 400 and no session, on both stores, never a 500;
// a display name or email with a NUL, or cut inside a character, is
// stored cleaned and the person signs in.
func TestSignIn_UnstorableClaims(t *testing.T) {
	for name, h := range harnesses() {
		t.Run(name, func(t *testing.T) {
			e := newEnvWith(t, h, oidctest.Start(t, nulSubject, nulName))
			resp := e.signIn(e.client, nulSubject.Subject, flow{})
			if resp.StatusCode != http.StatusBadRequest || sessionCookie(resp) != nil {
				t.Fatalf("NUL subject: status %d, cookie %v", resp.StatusCode, sessionCookie(resp))
			}
			if w := e.who(e.client); w != nil {
				t.Fatalf("signed in as %+v", w)
			}

			other := e.newClient()
			e.follow(e.signIn(other, nulName.Subject, flow{ret: "/"}), http.StatusSeeOther)
			w := e.who(other)
			if w == nil || w.Subject != "oidc:nul-name-sub" || strings.ContainsRune(w.Name+w.Email, 0) ||
				!strings.HasPrefix(w.Name, "Nul") || !utf8Valid(w.Name) || w.Email != "n@example.com" {
				t.Fatalf("whoami = %+v", w)
			}
		})
	}
}

func utf8Valid(s string) bool {
	return strings.ToValidUTF8(s, "\uFFFD") == s && !strings.ContainsRune(s, '\uFFFD')
}
