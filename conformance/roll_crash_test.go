//go:build linux

package conformance_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sys/unix"

	"github.com/fluxgate-io/fluxgate/client"
)

// The shape of the crash-after-roll test: tables, writers per table,
// SIGKILLs, the segment size, small enough that every batch rolls a
// segment, and the padding of each row, which makes frames take long
// enough to write that a kill right after a roll finds some still queued.
const (
	rollCrashTables  = 2
	rollCrashWriters = 2
	rollCrashCycles  = 40
	rollCrashSegment = 16 << 10
	rollCrashPad     = 128
)

// TestCrashRightAfterRolls SIGKILLs the server the moment a segment roll
// creates a file, 40 times, while writers write to two tables of 16 KiB
// segments, and after each restart reads every table from its earliest
// offset against the writers' ledger: every acknowledged batch whole and
// once, nothing else but whole unacknowledged batches (issue 28: a roll
// named the new segment past frames still queued, and after a crash every
// full read failed with DATA_LOSS at the hole).
func TestCrashRightAfterRolls(t *testing.T) {
	srv := startServer(t, "--segment-bytes", strconv.Itoa(rollCrashSegment))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := testContext(t, 2*time.Minute)
	c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	tables := make([]string, rollCrashTables)
	ledgers := make([]*ledger, rollCrashTables)
	var logDirs []string
	for i := range tables {
		tables[i] = "fluss.rolls_" + strconv.Itoa(i)
		spec := client.TableSpec{
			Table:   tables[i],
			Columns: []client.Column{{Name: "id", Type: "BIGINT", Nullable: new(false)}, {Name: "payload", Type: "STRING"}},
			Options: map[string]string{"bucket.num": "2", "bucket.key": "id"},
		}
		info, err := c.CreateTable(ctx, spec, false)
		if err != nil {
			t.Fatal(err)
		}
		dirs, err := filepath.Glob(filepath.Join(srv.dir, "tables", strconv.FormatInt(info.TableID, 10), "*", "log"))
		if err != nil || len(dirs) != 2 {
			t.Fatalf("log directories of %s: %v (%v), want 2", tables[i], dirs, err)
		}
		logDirs = append(logDirs, dirs...)
		ledgers[i] = &ledger{pad: rollCrashPad, batches: map[batchKey]*batchState{}}
	}
	rolls := watchCreates(t, logDirs)
	killed := 0
	for cycle := range rollCrashCycles {
		var wg sync.WaitGroup
		for i, table := range tables {
			for w := range rollCrashWriters {
				wg.Go(func() { crashWriter(ctx, c, table, cycle, w, ledgers[i], mem) })
			}
		}
		// Kill at a roll after a few acknowledgements, a different number
		// each cycle, so that the kills fall at different points of the
		// writers' streams.
		wantAcked := 1 + cycle%2
		rolls.drain()
		for {
			rolls.wait(t, 10*time.Second)
			if ackedIn(ledgers, cycle) >= wantAcked {
				break
			}
		}
		if err := srv.kill(); err != nil {
			t.Fatalf("cycle %d: SIGKILL: %v", cycle, err)
		}
		killed++
		wg.Wait()
		if err := srv.start(); err != nil {
			t.Fatalf("cycle %d: restart after SIGKILL: %v", cycle, err)
		}
		nc, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		c = nc
		for i, table := range tables {
			ledgers[i].verify(ctx, t, c, table, cycle)
		}
	}
	segments, err := filepath.Glob(filepath.Join(srv.dir, "tables", "*", "*", "log", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d SIGKILLs right after a roll; %d segments in the end", killed, len(segments))
}

// ackedIn counts the batches of the cycle acknowledged so far.
func ackedIn(ledgers []*ledger, cycle int) int {
	n := 0
	for _, l := range ledgers {
		l.mu.Lock()
		for k, st := range l.batches {
			if k.cycle == cycle && st.acked {
				n++
			}
		}
		l.mu.Unlock()
	}
	return n
}

// createWatch reports files created in a set of directories (inotify), so
// that the test reacts to a roll without polling.
type createWatch struct{ fd int }

func watchCreates(t *testing.T, dirs []string) *createWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	for _, d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, d, unix.IN_CREATE); err != nil {
			t.Fatalf("watch %s: %v", d, err)
		}
	}
	return &createWatch{fd}
}

// wait blocks until a segment file (*.log) is created; the test fails if
// none is within the time limit.
func (w *createWatch) wait(t *testing.T, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds())+1); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatal(err)
		}
		if w.read(t) {
			return
		}
	}
	t.Fatalf("no segment was rolled within %s", limit)
}

// drain forgets the files created so far.
func (w *createWatch) drain() {
	for w.read(nil) {
	}
}

// read reads the pending events and reports whether a segment file was
// among them.
func (w *createWatch) read(t *testing.T) bool {
	buf := make([]byte, 64<<10)
	n, err := unix.Read(w.fd, buf)
	if err != nil {
		if !errors.Is(err, unix.EAGAIN) && t != nil {
			t.Fatal(err)
		}
		return false
	}
	created := false
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
		if strings.HasSuffix(string(bytes.TrimRight(name, "\x00")), ".log") {
			created = true
		}
		off += unix.SizeofInotifyEvent + int(ev.Len)
	}
	return created
}
