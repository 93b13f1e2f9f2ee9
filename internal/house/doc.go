// Package house keeps docs/DESIGN.md's import arrows true: its test compares
// the arrows block there with what the packages import. It has no code.
package house
