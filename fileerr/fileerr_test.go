package fileerr

import "testing"

// The file is always named; the line and the field only when known.
func TestError(t *testing.T) {
	for _, tt := range []struct {
		err  Error
		want string
	}{
		{Error{File: "a.yaml", Line: 3, Field: "workers", Message: "want a whole number"}, "a.yaml:3: workers: want a whole number"},
		{Error{File: "a.yaml", Line: 1, Message: "not YAML"}, "a.yaml:1: not YAML"},
		{Error{File: "a.yaml", Field: "oidc.issuer", Message: "is required"}, "a.yaml: oidc.issuer: is required"},
		{Error{File: "a.yaml", Message: "the file is empty"}, "a.yaml: the file is empty"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.err, got, tt.want)
		}
	}
}
