package scanplan

import (
	"testing"

	"github.com/fluxgate-io/fluxgate/protocol"
)

func offset(v int64) *int64 { return &v }

// With a limit, a plan's ranges become one ticket that reads them in turn,
// and its row count is at most the limit.
func TestAddTicketsLimitChainsRanges(t *testing.T) {
	ranges := []protocol.TicketRange{{Bucket: 0, Start: 2, Stop: offset(10)}, {Bucket: 1, Start: 0, Stop: offset(5)}}
	var plan Plan
	plan.addTickets(protocol.Ticket{V: 1, Table: "db.t"}, ranges, offset(7), true)
	if len(plan.Tickets) != 1 {
		t.Fatalf("tickets = %d, want 1", len(plan.Tickets))
	}
	tk := plan.Tickets[0]
	if tk.Bucket != 0 || tk.Start != 2 || *tk.Stop != 10 || *tk.Limit != 7 || len(tk.Then) != 1 || tk.Then[0].Bucket != 1 {
		t.Errorf("ticket = %+v, want bucket 0 [2, 10) limit 7, then bucket 1", tk)
	}
	if plan.TotalRecords != 7 {
		t.Errorf("TotalRecords = %d, want 7 (13 rows, limit 7)", plan.TotalRecords)
	}
}

// Without a limit each range is a ticket; an unbounded range, or offsets
// that do not count rows, leave the row count unknown.
func TestAddTicketsTicketPerRange(t *testing.T) {
	ranges := []protocol.TicketRange{{Bucket: 0, Start: 0, Stop: offset(4)}, {Bucket: 1, Start: 3, Stop: offset(5)}}
	for _, tc := range []struct {
		name    string
		ranges  []protocol.TicketRange
		counted bool
		want    int64
	}{
		{"counted", ranges, true, 6},
		{"not counted", ranges, false, -1},
		{"unbounded", append(ranges[:1:1], protocol.TicketRange{Bucket: 1}), true, -1},
	} {
		var plan Plan
		plan.addTickets(protocol.Ticket{V: 1}, tc.ranges, nil, tc.counted)
		if len(plan.Tickets) != 2 || plan.Tickets[1].Bucket != 1 || plan.Tickets[1].Start != tc.ranges[1].Start {
			t.Errorf("%s: tickets = %+v, want one per range", tc.name, plan.Tickets)
		}
		if plan.TotalRecords != tc.want {
			t.Errorf("%s: TotalRecords = %d, want %d", tc.name, plan.TotalRecords, tc.want)
		}
	}
}
