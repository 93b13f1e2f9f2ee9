package protocol

import "time"

// DefaultFlightAddr is the server's default Flight address (fluxgate serve
// --listen), where clients look for it unless told otherwise.
const DefaultFlightAddr = "127.0.0.1:8815"

// The server's limits a client can hit, at their defaults (PROTOCOL.md §1,
// "Limits"): the defaults of flight.Limits and of the fluxgate serve flags
// of the same names, and what clients size their messages by.
const (
	DefaultMaxMessageBytes     = 64 << 20
	DefaultMaxStreamsPerClient = 256
	DefaultMaxWriteBytes       = 1 << 30
	DefaultStreamIdleTimeout   = 10 * time.Minute
)
