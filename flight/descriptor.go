package flight

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// pathTable turns a PATH descriptor, [database, table] or [table], into a
// table name.
func pathTable(d *flight.FlightDescriptor) (string, error) {
	switch len(d.Path) {
	case 1:
		return d.Path[0], nil
	case 2:
		return d.Path[0] + "." + d.Path[1], nil
	}
	return "", errs.New(errs.InvalidArgument, "descriptor path %q: want [database, table] or [table]", strings.Join(d.Path, "/"))
}

func parseCommand(d *flight.FlightDescriptor) (protocol.Command, error) {
	return protocol.DecodeCommand(d.Cmd)
}

// readRequest reads what a GetFlightInfo or GetSchema descriptor asks for: a
// scan, or an inline lookup.
func readRequest(d *flight.FlightDescriptor) (*protocol.ScanRequest, *protocol.LookupRequest, error) {
	if d == nil {
		return nil, nil, errs.New(errs.InvalidArgument, "missing flight descriptor")
	}
	switch d.Type {
	case flight.DescriptorPATH:
		name, err := pathTable(d)
		return &protocol.ScanRequest{Table: name}, nil, err
	case flight.DescriptorCMD:
		c, err := parseCommand(d)
		if err != nil {
			return nil, nil, err
		}
		if c.Scan == nil && c.Lookup == nil {
			return nil, nil, errs.New(errs.InvalidArgument, `descriptor command: reads take {"scan": ...} or {"lookup": ...}`)
		}
		var lookup *protocol.LookupRequest
		if c.Lookup != nil {
			lookup = (*protocol.LookupRequest)(c.Lookup)
		}
		return c.Scan, lookup, nil
	}
	return nil, nil, errs.New(errs.InvalidArgument, "descriptor type %v: want PATH or CMD", d.Type)
}

// writeRequest reads the write a DoPut descriptor asks for.
func writeRequest(d *flight.FlightDescriptor) (protocol.WriteRequest, error) {
	if d == nil {
		return protocol.WriteRequest{}, errs.New(errs.InvalidArgument, "DoPut: the first message carries no flight descriptor")
	}
	switch d.Type {
	case flight.DescriptorPATH:
		name, err := pathTable(d)
		return protocol.WriteRequest{Table: name}, err
	case flight.DescriptorCMD:
		c, err := parseCommand(d)
		if err != nil {
			return protocol.WriteRequest{}, err
		}
		if c.Write == nil {
			return protocol.WriteRequest{}, errs.New(errs.InvalidArgument, `DoPut: the descriptor command must be {"write": ...}`)
		}
		return *c.Write, nil
	}
	return protocol.WriteRequest{}, errs.New(errs.InvalidArgument, "descriptor type %v: want PATH or CMD", d.Type)
}
