// Package client is the Go client of the fluxgate wire protocol (PROTOCOL.md):
// typed actions, writes through DoPut, scans through GetFlightInfo and DoGet.
// It is plain Arrow Flight plus JSON and imports nothing of the server, so it
// can be used against any server that speaks the protocol.
//
// Errors returned by calls that reach the server carry the server's gRPC
// status: status.Code(err) gives PROTOCOL.md §1's code even though the client
// wraps the error with the operation and table it was doing.
//
// A minimal session:
//
//	c, err := client.Dial(ctx, "127.0.0.1:8815")
//	defer c.Close()
//	info, err := c.CreateTable(ctx, client.TableSpec{Table: "fluss.t", Columns: cols}, true)
//	w, err := c.NewWriter(ctx, client.WriteRequest{Table: "fluss.t"})
//	res, err := w.Write(rec) // applied and durable once it returns
//	err = w.Close()
//	tbl, err := c.ReadAll(ctx, client.ScanRequest{Table: "fluss.t"})
//
//	l, err := c.Lookup(ctx, client.LookupRequest{Table: "fluss.dim"})
//	ans, meta, err := l.Lookup(keys) // _key_index + the rows found, over one DoExchange stream
package client
