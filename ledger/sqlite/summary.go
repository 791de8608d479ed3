package sqlite

import (
	"strings"
)

// summaryCols are cols with the payload read as NULL, for reads that never
// need it (the API's get and list): the row then costs the same whatever
// the payload's size.
var summaryCols = func() string {
	s := strings.Replace(cols, "payload,", "NULL,", 1)
	if s == cols {
		panic("sqlite: summaryCols: no payload column in cols")
	}
	return s
}()
