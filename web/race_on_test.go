//go:build race

package web_test

// raceEnabled is true under -race, whose shadow memory inflates the
// process's RSS (not the Go heap).
const raceEnabled = true
