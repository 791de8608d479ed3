// Package fileerr is the one error type for a problem in a file a person
// wrote (target contracts, the console's sign-in file, settle serve's
// --config): it names the file, the line and the setting, so that they can
// fix it without reading settle's code.
package fileerr

import (
	"fmt"
	"strings"
)

// Error is one problem of a file, written "file:line: field: message".
// Its message never quotes a value that could be a secret or a
// credential-bearing URL.
type Error struct {
	File    string // the path as given
	Line    int    // 1-based; 0 when the problem belongs to the whole file
	Field   string // the setting, e.g. "workers" or "targets[0].timeout"; empty for the whole file
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}
