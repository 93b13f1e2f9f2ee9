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
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/datadir"
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/engine/internal/logwrite"
	"github.com/fluxgate-io/fluxgate/engine/internal/pkwrite"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanplan"
	"github.com/fluxgate-io/fluxgate/engine/internal/scanread"
	"github.com/fluxgate-io/fluxgate/engine/internal/tablelookup"
	"github.com/fluxgate-io/fluxgate/engine/internal/tables"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/producer"
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

	// The rooms (engine/internal), built once by Open: the open tables,
	// and each room over what it uses (its Env).
	tables  *tables.Set      // the open tables and partitions
	lakes   *laketier.Lakes  // the tables' lake tiers
	pkw     *pkwrite.Env     // the primary-key write pipeline, undo
	logw    *logwrite.Env    // the write path
	plan    *scanplan.Env    // read planning
	reads   *scanread.Env    // reading tickets
	lookups *tablelookup.Env // lookups

	alterMu sync.Mutex // serializes alter-table, so that schemas are stored in order

	autoPartMu sync.Mutex // serializes auto-partition checks (autopartition.go)

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
		return nil, errs.New(errs.InvalidArgument, "open files %d: want at least %d", opts.OpenFiles, MinOpenFiles)
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
	e := &Engine{dir: dir, opts: opts, cat: cat, kv: store, lake: lk, producers: producers, draining: make(chan struct{})}
	e.life, e.stop = context.WithCancel(context.Background())
	// Before the metrics: their callback counts the logs' open files.
	e.logOpts = opts.logOptions(func(d time.Duration) { e.met.observeSync(d) })
	e.tables = tables.New(cat, tables.Options{Dir: dir, Log: e.logOpts, Alloc: opts.Allocator, KV: store, Logger: opts.Logger,
		Zone: opts.AutoPartition.Zone, Now: opts.AutoPartition.Now})
	if e.met, err = newMetrics(e, opts.Meter); err != nil {
		lk.Close()
		store.Close()
		cat.Close()
		return nil, err
	}
	// Before any table opens: the metrics' callback reads e.lakes of each
	// open table.
	e.lakes = e.newLakes()
	e.pkw = &pkwrite.Env{Alloc: opts.Allocator, KV: store, Logger: opts.Logger, Tables: e.tables}
	e.plan = &scanplan.Env{Tables: e.tables, Lakes: e.lakes}
	e.logw = &logwrite.Env{Alloc: opts.Allocator, Tables: e.tables, PK: e.pkw,
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
	for id, err := range unavailable {
		e.tables.SetUnavailable(id, err)
	}
	openErrs := e.tables.OpenAll(infos)
	for i, info := range infos {
		if err := openErrs[i]; err != nil {
			// A damaged log, or state that cannot be recovered from it,
			// makes only its table unavailable.
			if cerr := e.corruptTable(info, err); cerr != nil {
				e.tables.SetUnavailable(info.TableID, cerr)
				continue
			}
			if errs.Is(err, errs.DataLoss) {
				e.opts.Logger.Error("table is unavailable: its state cannot be recovered from its log", "table", info.Path().String(), "err", err)
				e.tables.SetUnavailable(info.TableID, err)
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
	err := e.tables.Close()
	err = errors.Join(err, e.kv.Close(), e.cat.Close(), e.lake.Close(), e.producers.Close())
	if e.lock != nil { // nil when a failing Open closes e; Open releases it then
		err = errors.Join(err, e.lock.Close())
	}
	return err
}

func (e *Engine) tableDir(id int64) string {
	return datadir.TableDir(e.dir, id)
}

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
	for _, t := range e.tables.All() {
		info := t.Current().Info
		n, err := t.Log.Expire(info.LogTTL(), e.lakes.Keep(ctx, t))
		if err != nil {
			e.opts.Logger.Warn("log retention failed", "table", info.Path().String(), "err", err)
		} else if n > 0 {
			e.opts.Logger.Info("log retention removed segments", "table", info.Path().String(), "segments", n)
		}
	}
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
	if info, _, err := e.tables.Info(name); err == nil && info.IsPartitioned() {
		var n int64
		for _, p := range e.cat.Partitions(info.TableID) {
			t, err := e.tables.Partition(p.PartitionID)
			if err != nil {
				return 0, err
			}
			n += t.Log.BytesRead()
		}
		return n, nil
	}
	t, _, err := e.tables.Resolve(name)
	if err != nil {
		return 0, err
	}
	return t.Log.BytesRead(), nil
}
