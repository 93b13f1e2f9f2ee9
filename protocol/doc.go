// Package protocol holds the wire types of docs/PROTOCOL.md once: the
// descriptor commands, tickets, app_metadata documents, every DoAction body
// and answer, and table definitions, with their JSON. The server (flight,
// engine, catalog) decodes with these types and the Go client encodes with
// them; testdata/ holds the vectors that the Go, Java and Python clients each
// decode and re-encode, and schema.json, generated from these types
// (go generate; schemagen_test.go), describes the same documents for other
// languages. Actions names every action with its body and answer types.
//
// Decoding what a client sends is strict (DecodeJSON): an unknown field or a
// key given twice is errs.InvalidArgument. The package imports nothing of the server
// but errs and sqltype.
package protocol
