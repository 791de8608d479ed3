//go:build unix

package main

import "syscall"

// openFileLimit is the process's limit on open files (the soft limit,
// which the Go runtime raises to the hard limit at start).
func openFileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return r.Cur, true
}
