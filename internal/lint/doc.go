// Package lint keeps the design's rules true: its tests compare
// docs/DESIGN.md's arrows block with what the packages import, check the
// arrows against the design's rules, check the source rules (who prints,
// checked Arrow allocations in tests), that every path README.md and docs/
// name exists, and that docs/locking.md's names are the code's. It has no
// code.
package lint
