package conformance

// err-forged-ticket, err-offset-out-of-range and err-dropped-during-scan:
// reads that PROTOCOL.md §1 and §4 refuse or end with an error.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
)

func errForgedTicket(ctx context.Context, env *Env) error {
	table := env.Table("ticket")
	if _, err := createTable(ctx, env, simpleSpec(table, 2, true)); err != nil {
		return err
	}
	if _, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(0, 10)); err != nil {
		return err
	}
	plan, err := env.Client.Plan(ctx, client.ScanRequest{Table: table})
	if err != nil {
		return err
	}
	valid := plan.Endpoints[0].Ticket
	if err := redeem(ctx, env, valid); err != nil {
		return fmt.Errorf("redeem the unchanged ticket %s: %w", valid, err)
	}
	const badID = 9_000_000_000_000
	cases := []struct {
		what    string
		ticket  []byte
		codes   []codes.Code
		culprit string
	}{
		{"garbage bytes", []byte("\x00\xffnot a ticket"), []codes.Code{codes.InvalidArgument}, "ticket"},
		{"an unknown field", forge(valid, "colour", "blue"), []codes.Code{codes.InvalidArgument}, "colour"},
		{"a table id that does not exist", forge(valid, "table_id", badID), []codes.Code{codes.NotFound}, strconv.Itoa(badID)},
		{"a bucket the table does not have", forge(valid, "bucket", 99), []codes.Code{codes.InvalidArgument, codes.NotFound}, "99"},
		{"a negative start", forge(valid, "start", -5), []codes.Code{codes.InvalidArgument}, "-5"},
		{"an unknown view", forge(valid, "view", "sideways"), []codes.Code{codes.InvalidArgument}, "sideways"},
	}
	for _, tc := range cases {
		err := redeem(ctx, env, tc.ticket)
		if err := wantCodeIn(fmt.Sprintf("DoGet of a ticket with %s (%q)", tc.what, tc.ticket), err, tc.codes, tc.culprit); err != nil {
			return err
		}
	}
	// A ticket of a table that was dropped and created again names the old
	// table id: NOT_FOUND, not the new table's rows.
	if err := env.Client.DropTable(ctx, table, false); err != nil {
		return err
	}
	if _, err := createTable(ctx, env, simpleSpec(table, 2, true)); err != nil {
		return err
	}
	err = redeem(ctx, env, valid)
	return wantCode("DoGet of a ticket of a table dropped and re-created", err, codes.NotFound, strconv.FormatInt(plan.Meta.TableID, 10))
}

// forge returns the JSON ticket with field set to v.
func forge(ticket []byte, field string, v any) []byte {
	var m map[string]any
	if err := json.Unmarshal(ticket, &m); err != nil {
		return append([]byte("not JSON: "), ticket...)
	}
	m[field] = v
	b, _ := json.Marshal(m)
	return b
}

// redeem reads a ticket to its end and returns the stream's error.
func redeem(ctx context.Context, env *Env, ticket []byte) error {
	st, err := env.Client.ReadTicket(ctx, ticket)
	if err != nil {
		return err
	}
	defer st.Release()
	for st.Next() {
	}
	return st.Err()
}

func errOffsetOutOfRange(ctx context.Context, env *Env) error {
	table := env.Table("range")
	if _, err := createTable(ctx, env, simpleSpec(table, 2, true)); err != nil {
		return err
	}
	if _, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(0, 10)); err != nil {
		return err
	}
	hw, err := env.Client.ListOffsets(ctx, table, client.Latest, nil)
	if err != nil {
		return err
	}
	// At the high watermark is in range: it reads nothing of bucket 0.
	if _, err := env.Client.Plan(ctx, client.ScanRequest{Table: table, Startup: client.AtOffsets(map[int]int64{0: hw[0]})}); err != nil {
		return fmt.Errorf("startup at bucket 0's high watermark %d: %w", hw[0], err)
	}
	past := hw[0] + 5
	_, err = env.Client.Plan(ctx, client.ScanRequest{Table: table, Startup: client.AtOffsets(map[int]int64{0: past})})
	what := fmt.Sprintf("scan with startup offset %d in bucket 0, whose high watermark is %d", past, hw[0])
	if err := wantCode(what, err, codes.OutOfRange, strconv.FormatInt(past, 10)); err != nil {
		return err
	}
	_, err = env.Client.Plan(ctx, client.ScanRequest{Table: table, Startup: client.AtOffsets(map[int]int64{0: -1})})
	return wantCode("scan with a negative startup offset", err, codes.InvalidArgument, "-1")
}

func errDroppedDuringScan(ctx context.Context, env *Env) error {
	table := env.Table("dropscan")
	if _, err := createTable(ctx, env, simpleSpec(table, 1, false)); err != nil {
		return err
	}
	if _, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(0, 10)); err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := env.Client.Scan(sctx, client.ScanRequest{Table: table, Stop: client.Unbounded})
	if err != nil {
		return err
	}
	defer s.Release()
	caughtUp := make(chan struct{})
	ended := make(chan error, 1)
	go func() {
		rows := int64(0)
		for s.Next() {
			if rows += s.RecordBatch().NumRows(); rows == 10 {
				close(caughtUp)
			}
		}
		ended <- s.Err()
	}()
	defer func() {
		cancel()
		<-ended // Release only once the reader is done with s
	}()
	select {
	case <-caughtUp:
	case err := <-ended:
		ended <- err
		return fmt.Errorf("the unbounded scan ended before the drop: %v", err)
	case <-time.After(5 * time.Second):
		return fmt.Errorf("the unbounded scan did not deliver the table's 10 rows within 5 s")
	}
	if err := env.Client.DropTable(ctx, table, false); err != nil {
		return err
	}
	select {
	case err := <-ended:
		ended <- err
		return wantCode("an unbounded scan of a table that was dropped", err, codes.NotFound, table)
	case <-time.After(heartbeatWithin):
		return fmt.Errorf("the unbounded scan of %s went on for %s after the table was dropped, want it ended with NOT_FOUND", table, heartbeatWithin)
	}
}
