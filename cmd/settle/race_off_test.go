//go:build !race

package main

// raceEnabled is true when the tests are built with -race; TestMain then
// builds the binary under test with -race too.
const raceEnabled = false
