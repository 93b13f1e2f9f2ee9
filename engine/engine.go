// Package engine is the in-process API that every front end calls: it owns
// the catalog and the open tables, validates writes and routes them to
// buckets, plans scans into self-contained tickets and reads them back. It
// knows nothing of Flight or gRPC; errors carry an errs kind.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sync/errgroup"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/datadir"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/engine/internal/logwrite"
	"github.com/fluxgate-io/fluxgate/engine/internal/pkwrite"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanplan"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanread"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/tablelookup"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/producer"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Engine is an open data directory.
type Engine struct {
	dir     string
	opts    Options
	logOpts logstore.Options // of every table's log
	cat     *catalog.Catalog
	kv      *kv.Store
	lake    *lake.Lake
	met     *metrics
	lock    io.Closer // of the data directory; released last by Close

	producers *producer.Store // undo recovery's producer offsets (producers.go)

	// The rooms (engine/internal), each over what it uses of the engine,
	// built once by Open.
	lakes   *laketier.Lakes // the tables' lake tiers (lake.go)
	pkw     *pkwrite.Env    // the primary-key write pipeline
	logw    *logwrite.Env   // the write path (write.go)
	plan    scanplan.Env    // read planning (plan.go)
	reads   *scanread.Env   // reading (read.go)
	lookups tablelookup.Env // lookups (lookup.go)

	mu          sync.RWMutex
	tables      map[int64]*table.Table // open tables by id; guarded by mu
	unavailable map[int64]error        // tables that could not open, and why; guarded by mu

	alterMu sync.Mutex // serializes alter-table, so that schemas are stored in order
	partMu  sync.Mutex // serializes partition DDL with dropping tables (partitions.go)

	autoPartMu sync.Mutex // serializes auto-partition checks (autopartition.go)

	// partitionListed, if set, is called by createPartition between listing
	// a new partition in the catalog and opening it (tests).
	partitionListed func()

	kvRecovery sync.Mutex // serializes reopening a broken kv store (recoverKV)

	draining chan struct{} // closed by Drain
	// life is the engine's lifetime: background work (retention, tiering)
	// runs under it, and Close cancels it, so that no lake call outlives
	// the engine.
	life context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// Open opens the data directory dir, creating it if needed, and recovers
// every table's log. A table whose log is corrupt, or whose data is in
// quarantine, stays unavailable (its calls fail with errs.DataLoss) while the
// others serve; table data that the catalog does not name is moved to
// quarantine, never deleted. ctx bounds the opening (of the lake's catalog,
// which may be a service), not the engine's life: that lasts until Close.
func Open(ctx context.Context, dir string, opts Options) (*Engine, error) {
	opts = opts.withDefaults()
	if opts.OpenFiles < MinOpenFiles {
		return nil, errs.New(errs.Invalid, "open files %d: want at least %d", opts.OpenFiles, MinOpenFiles)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	lock, err := datadir.Lock(dir)
	if err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened {
			lock.Close()
		}
	}()
	data, err := datadir.Scan(dir)
	if err != nil {
		return nil, fmt.Errorf("list table data: %w", err)
	}
	if err := checkCatalog(dir, data, opts); err != nil {
		return nil, err
	}
	cat, err := catalog.Open(filepath.Join(dir, "catalog"), catalog.Options{DefaultBucketNum: opts.DefaultBucketNum, MaxPartitions: opts.MaxPartitions, Logger: opts.Logger, FS: opts.CatalogFS, MaxOpenFiles: opts.pebbleOpenFiles()})
	if err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	store, err := kv.Open(filepath.Join(dir, "kv"), kv.Options{Logger: opts.Logger, FS: opts.KVFS, MaxOpenFiles: opts.pebbleOpenFiles()})
	if err != nil {
		cat.Close()
		return nil, err
	}
	if opts.Lake.Warehouse == "" && opts.Lake.Catalog["type"] != "rest" {
		// A REST catalog's service knows its warehouse; the filesystem and
		// SQL catalogs keep the lake in the data directory.
		opts.Lake.Warehouse = lake.DefaultWarehouse(dir)
	}
	lk, err := lake.Open(ctx, lake.Options{Warehouse: opts.Lake.Warehouse, Catalog: opts.Lake.Catalog, Iceberg: opts.Lake.Iceberg, BeforeCommit: opts.Lake.BeforeCommit})
	if err != nil {
		store.Close()
		cat.Close()
		return nil, err
	}
	producers, err := producer.Open(vfs.Default, dir)
	if err != nil {
		lk.Close()
		store.Close()
		cat.Close()
		return nil, err
	}
	e := &Engine{dir: dir, opts: opts, cat: cat, kv: store, lake: lk, producers: producers, tables: map[int64]*table.Table{}, draining: make(chan struct{})}
	e.life, e.stop = context.WithCancel(context.Background())
	e.pkw = &pkwrite.Env{Alloc: opts.Allocator, KV: store, Logger: opts.Logger, RecoverKV: e.recoverKV}
	// Before the metrics: their callback counts the logs' open files.
	e.logOpts = opts.logOptions(func(d time.Duration) { e.met.observeSync(d) })
	if e.met, err = newMetrics(e, opts.Meter); err != nil {
		lk.Close()
		store.Close()
		cat.Close()
		return nil, err
	}
	// Before any table opens: the metrics' callback reads e.lakes of each
	// open table.
	e.lakes = e.newLakes()
	e.plan = e.planEnv()
	e.logw = &logwrite.Env{Alloc: opts.Allocator, PK: e.pkw, Partition: e.partitionTable,
		Metrics: logwrite.Metrics{Rows: e.met.rowsWritten, Bytes: e.met.bytesWritten, Table: tableAttr}}
	e.lookups = e.newLookupEnv()
	e.reads = e.readEnv()
	tables, err := cat.ListTables("")
	if err != nil {
		lk.Close()
		store.Close()
		cat.Close()
		return nil, err
	}
	infos := e.physicalInfos(tables)
	unavailable, err := e.checkTableData(infos, data)
	if err != nil {
		e.Close()
		return nil, err
	}
	e.unavailable = unavailable
	openErrs := e.openAll(infos)
	for i, info := range infos {
		if err := openErrs[i]; err != nil {
			// A damaged log, or state that cannot be recovered from it,
			// makes only its table unavailable.
			if cerr := e.corruptTable(info, err); cerr != nil {
				e.unavailable[info.TableID] = cerr
				continue
			}
			if errs.Is(err, errs.DataLoss) {
				e.opts.Logger.Error("table is unavailable: its state cannot be recovered from its log", "table", info.Path().String(), "err", err)
				e.unavailable[info.TableID] = err
				continue
			}
			e.Close()
			return nil, err
		}
	}
	e.quarantineOrphans(data)
	e.CheckAutoPartitions(ctx)
	e.wg.Add(3)
	go e.retentionLoop()
	go e.tieringLoop()
	go e.autoPartitionLoop()
	e.lock, opened = lock, true
	return e, nil
}

// Drain ends every following scan (with errs.Unavailable) so that a server
// can shut down; writes go on until Close.
func (e *Engine) Drain() {
	select {
	case <-e.draining:
	default:
		close(e.draining)
	}
}

// Close closes every table and the catalog.
func (e *Engine) Close() error {
	e.Drain()
	if e.life.Err() != nil {
		return nil
	}
	e.stop()
	e.wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	// Each log's close syncs it and records its writers: tableOpeners at once.
	tables := slices.Collect(maps.Values(e.tables))
	closed := make([]error, len(tables))
	var g errgroup.Group
	g.SetLimit(tableOpeners)
	for i, t := range tables {
		g.Go(func() error {
			if t.PK != nil {
				t.PK.Quiesce()()
			}
			closed[i] = t.Log.Close()
			return nil
		})
	}
	_ = g.Wait() // the errors are in closed
	clear(e.tables)
	err := errors.Join(closed...)
	err = errors.Join(err, e.kv.Close(), e.cat.Close(), e.lake.Close(), e.producers.Close())
	if e.lock != nil { // nil when a failing Open closes e; Open releases it then
		err = errors.Join(err, e.lock.Close())
	}
	return err
}

func (e *Engine) tableDir(id int64) string {
	return datadir.TableDir(e.dir, id)
}

func (e *Engine) openTable(info *catalog.TableInfo) (*table.Table, error) {
	t, err := table.Open(e.tableDir(info.TableID), info, e.logOpts, e.opts.Allocator, e.kv)
	if err != nil {
		return nil, err
	}
	if t.PK != nil {
		if err := e.pkw.Replay(e.kv, t); err != nil {
			t.Log.Close()
			return nil, fmt.Errorf("open table %s: %w", info.Path(), err)
		}
	}
	e.mu.Lock()
	e.tables[info.TableID] = t
	e.mu.Unlock()
	return t, nil
}

// openAll opens the tables that are not unavailable, tableOpeners at once
// (recovering a log waits mostly on fsyncs, which a disk serves better
// together), and returns each one's error.
func (e *Engine) openAll(infos []*catalog.TableInfo) []error {
	failed := make([]error, len(infos))
	var g errgroup.Group
	g.SetLimit(tableOpeners)
	for i, info := range infos {
		if e.unavailable[info.TableID] == nil {
			g.Go(func() error {
				_, failed[i] = e.openTable(info)
				return nil
			})
		}
	}
	_ = g.Wait() // the errors are in failed
	return failed
}

// tableOpeners is how many tables Open opens, and Close closes, at once.
const tableOpeners = 8

func (e *Engine) retentionLoop() {
	defer e.wg.Done()
	tick := time.NewTicker(e.opts.RetentionInterval)
	defer tick.Stop()
	for {
		select {
		case <-e.life.Done():
			return
		case <-tick.C:
			e.ExpireLogs(e.life)
		}
	}
}

// ExpireLogs removes the log segments that every table's table.log.ttl has
// expired. It runs every RetentionInterval; tests call it directly. ctx
// bounds asking the lake what it still needs.
func (e *Engine) ExpireLogs(ctx context.Context) {
	e.mu.RLock()
	tables := make([]*table.Table, 0, len(e.tables))
	for _, t := range e.tables {
		tables = append(tables, t)
	}
	e.mu.RUnlock()
	for _, t := range tables {
		info := t.Current().Info
		n, err := t.Log.Expire(info.LogTTL(), e.lakes.Keep(ctx, t))
		if err != nil {
			e.opts.Logger.Warn("log retention failed", "table", info.Path().String(), "err", err)
		} else if n > 0 {
			e.opts.Logger.Info("log retention removed segments", "table", info.Path().String(), "segments", n)
		}
	}
}

// table returns the open table for a catalog entry.
func (e *Engine) table(info *catalog.TableInfo) (*table.Table, error) {
	e.mu.RLock()
	t, ok := e.tables[info.TableID]
	unavailable := e.unavailable[info.TableID]
	e.mu.RUnlock()
	if unavailable != nil {
		return nil, unavailable
	}
	if !ok || t.Dropped.Load() {
		return nil, errs.New(errs.NotFound, "table %s does not exist", info.Path())
	}
	return t, nil
}

// resolve parses a table name (with an optional $view) and returns the table.
func (e *Engine) resolve(name string) (*table.Table, protocol.TablePath, error) {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return nil, path, err
	}
	info, err := e.cat.Table(protocol.TablePath{Database: path.Database, Table: path.Table})
	if err != nil {
		return nil, path, err
	}
	if info.IsPartitioned() {
		return nil, path, errs.New(errs.Unimplemented, "table %s is partitioned, and this request does not take partitioned tables yet", info.Path())
	}
	t, err := e.table(info)
	return t, path, err
}

// tableByID returns the open table with id, for tickets.
func (e *Engine) tableByID(id int64) (*table.Table, error) {
	e.mu.RLock()
	t, ok := e.tables[id]
	unavailable := e.unavailable[id]
	e.mu.RUnlock()
	if unavailable != nil {
		return nil, unavailable
	}
	if !ok || t.Dropped.Load() {
		return nil, errs.New(errs.NotFound, "table id %d does not exist (dropped or re-created)", id)
	}
	return t, nil
}

// Ready reports whether the engine serves: recovery has finished and it is
// not shutting down.
func (e *Engine) Ready() bool {
	select {
	case <-e.draining:
		return false
	default:
		return true
	}
}

// LogBytesRead reports how many bytes scans have read from a table's log
// files since it was opened (of all its partitions' on a partitioned table).
func (e *Engine) LogBytesRead(name string) (int64, error) {
	if info, _, err := e.resolveInfo(name); err == nil && info.IsPartitioned() {
		var n int64
		for _, p := range e.cat.Partitions(info.TableID) {
			t, err := e.openPartition(p.PartitionID)
			if err != nil {
				return 0, err
			}
			n += t.Log.BytesRead()
		}
		return n, nil
	}
	t, _, err := e.resolve(name)
	if err != nil {
		return 0, err
	}
	return t.Log.BytesRead(), nil
}
