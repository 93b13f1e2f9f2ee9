// Package cli is the plumbing the fluxgate binary's verbs share, so that the
// CLI in cmd/fluxgate and the bench and demo packages it wires in parse their
// flags and print their text the same way: commands as ff.Commands
// (github.com/peterbourgon/ff/v4) with standard library flag sets that allow
// flags after positional arguments, Run with its help and usage errors,
// aligned text tables, cell values, rates and indented JSON.
//
// It owns no verb and no connection.
package cli
