//go:build !unix

package main

// openFileLimit is unknown here.
func openFileLimit() (uint64, bool) { return 0, false }
