package postgres

import (
	"strings"
)

// summaryCols are cols with the payload read as NULL, for reads that never
// need it (the API's get and list): the row then costs the same whatever
// the payload's size, in the database's answer and in this process.
var summaryCols = func() string {
	s := strings.Replace(cols, "payload,", "NULL::bytea,", 1)
	if s == cols {
		panic("postgres: summaryCols: no payload column in cols")
	}
	return s
}()
