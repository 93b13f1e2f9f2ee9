package logstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/fsio"
)

// writerTable remembers, per idempotent writer, the last few batches it
// applied, so that a retried batch is acknowledged again without being
// applied twice. It keeps more than Fluss (five) so that a writer with many
// batches in flight can retry all of them after a crash.
type writerTable map[string][]applied

const appliedPerWriter = 32

type applied struct {
	Seq  int64         `json:"seq"`
	Txn  uint64        `json:"txn"`
	Ends map[int]int64 `json:"ends"`
	// At is the batch's commit time in Unix milliseconds: a writer whose
	// last batch is older than the expiration is forgotten. Snapshots from
	// before it was kept read as 0 and are stamped at open.
	At int64 `json:"at,omitempty"`
}

// DefaultWriterExpiration is how long an idle writer's state is kept, as
// Fluss's server.writer-id.expiration-time.
const DefaultWriterExpiration = 7 * 24 * time.Hour

// check returns the earlier result of w's batch if it was applied before, an
// error if w skipped a sequence number, and nil for the next batch. A writer
// whose last batch committed before idleBefore (Unix ms) has expired: it may
// start again at 0 or go on at its next sequence, but a retry or a gap can no
// longer be told apart from a new batch.
func (wt writerTable) check(w Writer, idleBefore int64) (*appliedRef, error) {
	hist := wt[w.ID]
	if len(hist) == 0 {
		return nil, nil
	}
	last := hist[len(hist)-1]
	if last.At < idleBefore {
		if w.Seq == 0 || w.Seq == last.Seq+1 || (w.Sparse && w.Seq > last.Seq) {
			return nil, nil
		}
		return nil, errs.New(errs.FailedPrecondition, "writer %q: its state expired (idle since its sequence %d), so sequence %d can be neither acknowledged nor applied; start again at sequence 0 or %d", w.ID, last.Seq, w.Seq, last.Seq+1)
	}
	switch {
	case w.Seq == last.Seq+1, w.Sparse && w.Seq > last.Seq:
		return nil, nil
	case w.Seq > last.Seq+1:
		return nil, errs.New(errs.FailedPrecondition, "writer %q: sequence %d is out of order, the next expected is %d", w.ID, w.Seq, last.Seq+1)
	}
	for _, a := range hist {
		if a.Seq == w.Seq {
			return &appliedRef{txn: a.Txn, ends: a.Ends}, nil
		}
	}
	return nil, errs.New(errs.FailedPrecondition, "writer %q: sequence %d was applied long ago and its result is no longer kept (oldest kept: %d)", w.ID, w.Seq, hist[0].Seq)
}

type appliedRef struct {
	txn  uint64
	ends map[int]int64
}

// next returns the sequence the writer's next batch takes: 0 for a writer
// unknown or expired.
func (wt writerTable) next(id string, idleBefore int64) int64 {
	hist := wt[id]
	if len(hist) == 0 || hist[len(hist)-1].At < idleBefore {
		return 0
	}
	return hist[len(hist)-1].Seq + 1
}

// record notes w's batch, restarting the history of a writer that starts
// again at sequence 0 (after its state expired).
func (wt writerTable) record(w Writer, txn uint64, ends map[int]int64, at int64) {
	hist := wt[w.ID]
	if n := len(hist); n > 0 && w.Seq <= hist[n-1].Seq {
		hist = nil
	}
	hist = append(hist, applied{Seq: w.Seq, Txn: txn, Ends: ends, At: at})
	if len(hist) > appliedPerWriter {
		hist = hist[len(hist)-appliedPerWriter:]
	}
	wt[w.ID] = hist
}

// noteFrame folds one replayed frame into the table: the parts of one batch
// arrive as separate frames, one per bucket.
func (wt writerTable) noteFrame(id string, seq int64, txn uint64, bucket int, end, at int64) {
	hist := wt[id]
	if n := len(hist); n > 0 && hist[n-1].Txn == txn {
		hist[n-1].Ends[bucket] = end
		return
	}
	wt.record(Writer{ID: id, Seq: seq}, txn, map[int]int64{bucket: end}, at)
}

// expire drops the writers whose last batch committed before idleBefore.
func (wt writerTable) expire(idleBefore int64) {
	for id, hist := range wt {
		if hist[len(hist)-1].At < idleBefore {
			delete(wt, id)
		}
	}
}

// stamp gives the batches of a snapshot written before commit times were
// kept the time the log was opened, so that they expire from then on.
func (wt writerTable) stamp(now int64) {
	for _, hist := range wt {
		for i := range hist {
			if hist[i].At == 0 {
				hist[i].At = now
			}
		}
	}
}

// writerSnapshot is the writer table as of a durable point, with each
// bucket's log end at that point, so that recovery replays only what came
// after it.
type writerSnapshot struct {
	Txn     uint64      `json:"txn"`
	Ends    []int64     `json:"ends"`
	Writers writerTable `json:"writers"`
}

const writersFile = "writers.json"

func (wt writerTable) snapshot(txn uint64, ends []int64) *writerSnapshot {
	cp := make(writerTable, len(wt))
	for id, hist := range wt {
		cp[id] = append([]applied(nil), hist...)
	}
	return &writerSnapshot{Txn: txn, Ends: ends, Writers: cp}
}

// write replaces the snapshot file atomically.
func (s *writerSnapshot) write(fsys vfs.FS, dir string) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return fsio.WriteFileAtomic(fsys, filepath.Join(dir, writersFile), b, 0o644)
}

func readWriterSnapshot(fsys vfs.FS, dir string, buckets int) (*writerSnapshot, error) {
	b, err := fsio.ReadFile(fsys, filepath.Join(dir, writersFile))
	if errors.Is(err, fs.ErrNotExist) {
		return &writerSnapshot{Ends: make([]int64, buckets), Writers: writerTable{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var s writerSnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", writersFile, err)
	}
	if len(s.Ends) != buckets {
		return nil, fmt.Errorf("%s: %d buckets, want %d", writersFile, len(s.Ends), buckets)
	}
	if s.Writers == nil {
		s.Writers = writerTable{}
	}
	return &s, nil
}
