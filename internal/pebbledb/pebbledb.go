// Package pebbledb opens fluxgate's pebble databases (the catalog and the
// primary-key state) so that a failing disk is an error that says so, never
// a hang: pebble retries a failed flush in a tight loop for ever, and its
// Open waits for the flush of the recovered log, so on a full disk Open would
// not return.
package pebbledb

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/errs"
)

// DB is an open pebble database and the health of its disk.
type DB struct {
	*pebble.DB
	h *health
}

// Open opens the database in dir with opts (whose Logger and EventListener
// it sets). It returns at the first failed flush while opening, as an error
// naming the cause, rather than wait for pebble's retries to succeed; the
// abandoned open goes on retrying, slowly, in the background and closes the
// database if it ever succeeds. name prefixes errors and log messages.
func Open(name, dir string, opts *pebble.Options, log *slog.Logger) (*DB, error) {
	h := &health{name: name, log: log, opening: make(chan error, 1)}
	opts.Logger = logger{log}
	opts.EventListener = h.listener()
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	opts.FS = walWatch{FS: opts.FS, h: h}
	type result struct {
		db  *pebble.DB
		err error
	}
	done := make(chan result, 1)
	go func() {
		db, err := openGuarded(dir, opts)
		done <- result{db, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		h.mu.Lock()
		h.opening = nil
		h.mu.Unlock()
		return &DB{DB: r.db, h: h}, nil
	case err := <-h.opening:
		go func() {
			if r := <-done; r.err == nil {
				r.db.Close()
			}
		}()
		return nil, StorageError(err, "%s: flush the recovered log", name)
	}
}

// openGuarded is pebble.Open with a failed MANIFEST write (a Fatal) as an
// error: it runs on Open's own goroutine, where a panic would end the process.
func openGuarded(dir string, opts *pebble.Options) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(Fatal)
			if !ok {
				panic(r)
			}
			db, err = nil, f
		}
	}()
	return pebble.Open(dir, opts)
}

// WriteErr is the reason writes are refused now, or nil: a flush that failed
// and has not succeeded since (writes would fill the memtables and stall),
// or a failed log write, which leaves this instance unable to commit again.
func (d *DB) WriteErr() error { return d.h.writeErr() }

// Broken reports whether a commit or a log write failed: this instance will
// not commit again, and only closing and reopening the database (which
// recovers from its files) brings writes back.
func (d *DB) Broken() bool {
	d.h.mu.Lock()
	defer d.h.mu.Unlock()
	return d.h.fatal != nil
}

// closeTimeout bounds CloseBroken: a close that waits on a flush retrying
// against a failing disk must not hold up the caller for ever.
const closeTimeout = 10 * time.Second

// CloseBroken closes a broken database. pebble may report the failed log
// again, or raise it as a Fatal, which is returned; a close that does not
// finish within closeTimeout is an error, and the database (and its
// directory's lock) is then left to it.
func (d *DB) CloseBroken() error {
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() { done <- err }()
		defer d.Guard(&err)
		err = d.DB.Close()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(closeTimeout):
		return errs.New(errs.Unavailable, "%s: close after a failed log write did not finish in %s", d.h.name, closeTimeout)
	}
}

// Fatal is pebble's report that a commit (or a MANIFEST write) failed. Its
// Logger.Fatalf must not return, so it panics with this; Guard turns it into
// an error on the goroutine that wrote.
type Fatal struct{ Msg string }

func (f Fatal) Error() string { return f.Msg }

// Guard recovers a Fatal raised by pebble during a write into *err and marks
// the database failed; other panics go on.
func (d *DB) Guard(err *error) {
	r := recover()
	if r == nil {
		return
	}
	f, ok := r.(Fatal)
	if !ok {
		panic(r)
	}
	*err = d.h.fail(f)
}

// StorageError gives a disk failure its kind: a full disk is
// RESOURCE_EXHAUSTED, any other I/O error UNAVAILABLE.
func StorageError(err error, format string, args ...any) error {
	kind := errs.Unavailable
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		kind = errs.ResourceExhausted
	}
	return errs.New(kind, "%s: %w", fmt.Sprintf(format, args...), err)
}

// maxBackoff bounds the pause after a repeated background error. pebble
// retries a failed flush at once, for ever; the pause (taken on pebble's
// flush goroutine) keeps that from spinning a core and flooding the log.
const maxBackoff = time.Second

// health follows a database's background errors.
type health struct {
	name string
	log  *slog.Logger

	mu       sync.Mutex
	opening  chan error // while opening: the first failed flush
	flushErr error      // the last flush failed with it; nil once one succeeds
	fatal    error      // a commit failed: sticky until the database is reopened
	repeats  int        // background errors since the last success
}

func (h *health) listener() *pebble.EventListener {
	l := &pebble.EventListener{
		BackgroundError: h.backgroundError,
		FlushEnd: func(info pebble.FlushInfo) {
			h.mu.Lock()
			defer h.mu.Unlock()
			if failed(info) {
				h.flushErr = info.Err
				if h.opening != nil {
					select {
					case h.opening <- info.Err:
					default:
					}
				}
				return
			}
			if h.flushErr != nil {
				h.log.Info("flushes succeed again: writes resume", "store", h.name, "failures", h.repeats)
			}
			h.flushErr, h.repeats = nil, 0
		},
	}
	l.EnsureDefaults(nil)
	return l
}

// failed tells a failed flush from one that succeeded, including one that
// had nothing to write, which pebble reports with its unexported
// errEmptyTable (matched by message, as pebble's own tests do).
func failed(info pebble.FlushInfo) bool {
	return info.Err != nil && info.Err.Error() != "pebble: empty table"
}

// backgroundError logs the first of a run of errors and then at powers of
// two, and pauses before pebble retries.
func (h *health) backgroundError(err error) {
	h.mu.Lock()
	h.repeats++
	n := h.repeats
	h.mu.Unlock()
	if n&(n-1) == 0 {
		h.log.Error("storage background error: pebble retries it", "store", h.name, "err", err.Error(), "failures", n)
	}
	if n > 1 {
		time.Sleep(min(time.Duration(n)*10*time.Millisecond, maxBackoff))
	}
}

func (h *health) writeErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fatal != nil {
		return h.fatal
	}
	if h.flushErr != nil {
		return StorageError(h.flushErr, "%s cannot flush; writes resume once it can", h.name)
	}
	return nil
}

// logFailed records a failed write or sync of pebble's log, which leaves
// pebble unable to commit, and returns err.
func (h *health) logFailed(err error) error {
	if err != nil {
		h.fail(fmt.Errorf("write its log: %w", err))
	}
	return err
}

// fail makes writes fail from now on: this pebble instance cannot commit
// again.
func (h *health) fail(err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fatal == nil {
		h.fatal = StorageError(err, "%s failed; writes resume once the disk works and it is reopened", h.name)
		h.log.Error("storage failed: writes are refused until it is reopened", "store", h.name, "err", err.Error())
	}
	return h.fatal
}

// logger sends pebble's messages to slog, informational ones at debug level.
type logger struct{ l *slog.Logger }

func (p logger) Infof(format string, args ...any)  { p.l.Debug(fmt.Sprintf(format, args...)) }
func (p logger) Errorf(format string, args ...any) { p.l.Error(fmt.Sprintf(format, args...)) }

// Fatalf must not return: pebble calls it when a commit or a MANIFEST write
// failed, and its state is then unusable.
func (p logger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg)
	panic(Fatal{Msg: msg})
}
