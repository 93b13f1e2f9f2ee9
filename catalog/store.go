// Package catalog owns table definitions: names, column types, options and
// their validation and defaults, table ids and schema ids, persisted in a
// pebble database. It does not own data: dropping a table here only forgets
// its definition, and the caller deletes what was stored under its id.
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/pebbledb"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Options configures a Catalog. The zero value is usable.
type Options struct {
	DefaultBucketNum int          // bucket.num of tables that do not set it; 0 means 1
	Logger           *slog.Logger // nil discards; pebble's messages go out at debug level
	// ReadOnly opens an existing catalog without changing a byte of it (not
	// even replaying its log into a new file), to look before the real open.
	// The directory is locked all the same.
	ReadOnly bool
	FS       vfs.FS // where the catalog's files are; nil is the real disk (tests inject faults)
	// MaxPartitions is max.partition.num, the most partitions of one table;
	// 0 means DefaultMaxPartitions.
	MaxPartitions int
	// MaxOpenFiles bounds the files pebble keeps open; 0 means pebble's
	// default (1000).
	MaxOpenFiles int
}

// Catalog is the persistent set of databases and tables. It is safe for
// concurrent use; DDL is serialized and every change is synced before it
// returns.
type Catalog struct {
	db            *pebbledb.DB
	defaults      Defaults
	maxPartitions int
	readOnly      bool

	mu struct {
		sync.RWMutex
		databases map[string]bool
		tables    map[string]*TableInfo // by protocol.TablePath.String()
		byID      map[int64]*TableInfo
		schemas   map[int64]map[int32]*arrow.Schema // every schema id of each table
		// partitions of each partitioned table by table id, then by name.
		partitions    map[int64]map[string]*Partition
		partitionByID map[int64]*Partition
		nextID        int64
	}
}

// Open opens (or creates) the catalog stored in dir. A new catalog starts with
// the database protocol.DefaultDatabase.
func Open(dir string, opts Options) (*Catalog, error) {
	if opts.DefaultBucketNum < 0 || opts.DefaultBucketNum > MaxBuckets {
		return nil, errs.New(errs.InvalidArgument, "default bucket number %d: expected 1 to %d", opts.DefaultBucketNum, MaxBuckets)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if _, err := os.Stat(dir); opts.ReadOnly && errors.Is(err, os.ErrNotExist) {
		return nil, errs.New(errs.NotFound, "open catalog %s: no catalog there: %w", dir, err)
	}
	db, err := pebbledb.Open("catalog", dir, &pebble.Options{
		FormatMajorVersion: pebble.FormatNewest,
		ReadOnly:           opts.ReadOnly,
		FS:                 opts.FS,
		MaxOpenFiles:       opts.MaxOpenFiles,
	}, log.With("component", "catalog"))
	if errors.Is(err, pebble.ErrDBDoesNotExist) {
		return nil, errs.New(errs.NotFound, "open catalog %s: no catalog there: %w", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", dir, err)
	}
	if opts.MaxPartitions < 0 {
		return nil, errs.New(errs.InvalidArgument, "max partitions %d is negative", opts.MaxPartitions)
	}
	if opts.MaxPartitions == 0 {
		opts.MaxPartitions = DefaultMaxPartitions
	}
	c := &Catalog{db: db, defaults: Defaults{BucketNum: opts.DefaultBucketNum}, maxPartitions: opts.MaxPartitions, readOnly: opts.ReadOnly}
	if err := c.load(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open catalog %s: %w", dir, err)
	}
	return c, nil
}

// Close closes the underlying store.
func (c *Catalog) Close() error { return c.db.Close() }

// CreateDatabase creates a database; if it exists, that is an error unless
// ifNotExists.
func (c *Catalog) CreateDatabase(name string, ifNotExists bool) error {
	if err := protocol.ValidateDatabaseName(name); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.databases[name] {
		if ifNotExists {
			return nil
		}
		return errs.New(errs.AlreadyExists, "database %s already exists", errs.Quote(name))
	}
	b := c.db.NewBatch()
	b.Set(databaseKey(name), nil, nil)
	if err := c.commit(b); err != nil {
		return fmt.Errorf("create database %s: %w", errs.Quote(name), err)
	}
	c.mu.databases[name] = true
	return nil
}

// DropDatabase drops a database and, with cascade, its tables, which it
// returns so that the caller can delete their data. A database with tables
// cannot be dropped without cascade. The default database may be dropped too.
func (c *Catalog) DropDatabase(name string, ifExists, cascade bool) ([]*TableInfo, error) {
	if err := protocol.ValidateDatabaseName(name); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mu.databases[name] {
		if ifExists {
			return nil, nil
		}
		return nil, errs.New(errs.NotFound, "database %s does not exist", errs.Quote(name))
	}
	tables := c.tablesLocked(name)
	if len(tables) > 0 && !cascade {
		return nil, errs.New(errs.FailedPrecondition, "database %s is not empty (%d tables); drop its tables first or drop with cascade", errs.Quote(name), len(tables))
	}
	b := c.db.NewBatch()
	b.Delete(databaseKey(name), nil)
	for _, t := range tables {
		c.deleteTableKeysLocked(b, t)
	}
	if err := c.commit(b); err != nil {
		return nil, fmt.Errorf("drop database %s: %w", errs.Quote(name), err)
	}
	delete(c.mu.databases, name)
	for _, t := range tables {
		c.forgetLocked(t)
	}
	return tables, nil
}

// ListDatabases returns the database names, sorted.
func (c *Catalog) ListDatabases() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.mu.databases))
}

// CreateTable validates spec, assigns it a new table id and stores it. If the
// table exists, that is an error unless ifNotExists, when the existing
// definition is returned with created false.
func (c *Catalog) CreateTable(spec TableSpec, ifNotExists bool) (info *TableInfo, created bool, err error) {
	info, err = NormalizeSpec(spec, c.defaults)
	if err != nil {
		return nil, false, err
	}
	path := info.Path()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mu.databases[path.Database] {
		return nil, false, errs.New(errs.NotFound, "table %s: database %s does not exist", path, errs.Quote(path.Database))
	}
	if old := c.mu.tables[path.String()]; old != nil {
		if ifNotExists {
			return old, false, nil
		}
		return nil, false, errs.New(errs.AlreadyExists, "table %s already exists", path)
	}
	info.TableID, info.SchemaID, info.CreatedAt = c.mu.nextID, 1, time.Now().UnixMilli()
	b := c.db.NewBatch()
	b.Set(nextIDKey, []byte(strconv.FormatInt(info.TableID+1, 10)), nil)
	if err := putTable(b, info, true); err != nil {
		return nil, false, err
	}
	if err := c.commit(b); err != nil {
		return nil, false, fmt.Errorf("create table %s: %w", path, err)
	}
	c.mu.nextID++
	c.rememberLocked(info)
	return info, true, nil
}

// DropTable forgets a table and returns its last definition so that the
// caller can delete its data. A missing table is an error unless ifExists,
// when DropTable returns nil.
func (c *Catalog) DropTable(path protocol.TablePath, ifExists bool) (*TableInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.mu.tables[path.String()]
	if t == nil {
		if ifExists {
			return nil, nil
		}
		return nil, notFound(path)
	}
	b := c.db.NewBatch()
	c.deleteTableKeysLocked(b, t)
	if err := c.commit(b); err != nil {
		return nil, fmt.Errorf("drop table %s: %w", path, err)
	}
	c.forgetLocked(t)
	return t, nil
}

// ReserveIDs makes CreateTable hand out no table id below next. The caller
// passes one more than the largest id it finds data of: a catalog that was
// lost or rolled back must not hand out an id whose data is still there.
func (c *Catalog) ReserveIDs(next int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if next <= c.mu.nextID {
		return nil
	}
	b := c.db.NewBatch()
	b.Set(nextIDKey, []byte(strconv.FormatInt(next, 10)), nil)
	if err := c.commit(b); err != nil {
		return fmt.Errorf("reserve table ids below %d: %w", next, err)
	}
	c.mu.nextID = next
	return nil
}

// NextID returns the table id the next CreateTable takes.
func (c *Catalog) NextID() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.mu.nextID
}

// Table returns a table's definition; path.View is ignored.
func (c *Catalog) Table(path protocol.TablePath) (*TableInfo, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t := c.mu.tables[path.String()]; t != nil {
		return t, nil
	}
	return nil, notFound(path)
}

// TableByID returns the definition of a live table by id; a dropped table's
// id is not found.
func (c *Catalog) TableByID(id int64) (*TableInfo, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t := c.mu.byID[id]; t != nil {
		return t, nil
	}
	return nil, errs.New(errs.NotFound, "table id %d does not exist (dropped, or dropped and re-created under a new id)", id)
}

// ListTables returns the tables of a database, or of all databases for "",
// sorted by name.
func (c *Catalog) ListTables(database string) ([]*TableInfo, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if database != "" && !c.mu.databases[database] {
		return nil, errs.New(errs.NotFound, "database %s does not exist", errs.Quote(database))
	}
	return c.tablesLocked(database), nil
}

// AlterTable applies ValidateAlter to a table and stores the result.
func (c *Catalog) AlterTable(path protocol.TablePath, set map[string]string, reset []string, addColumns []Column) (*TableInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.mu.tables[path.String()]
	if old == nil {
		return nil, notFound(path)
	}
	info, err := ValidateAlter(old, set, reset, addColumns)
	if err != nil {
		return nil, err
	}
	b := c.db.NewBatch()
	if err := putTable(b, info, info.SchemaID != old.SchemaID); err != nil {
		return nil, err
	}
	if err := c.commit(b); err != nil {
		return nil, fmt.Errorf("alter table %s: %w", path, err)
	}
	c.rememberLocked(info)
	return info, nil
}

// SchemaByID returns the Arrow schema a table had under a schema id, for
// data written before columns were added.
func (c *Catalog) SchemaByID(tableID int64, schemaID int32) (*arrow.Schema, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t := c.mu.byID[tableID]
	if t == nil {
		return nil, errs.New(errs.NotFound, "table id %d does not exist", tableID)
	}
	if s := c.mu.schemas[tableID][schemaID]; s != nil {
		return s, nil
	}
	return nil, errs.New(errs.NotFound, "table %s has no schema id %d (latest is %d)", t.Table, schemaID, t.SchemaID)
}

// On-disk layout (all values JSON unless noted):
//
//	db/<name>                       empty
//	table/<table id, 20 digits>     TableInfo
//	schema/<table id>/<schema id>   []Column of that schema id
//	partition/<table id>/<name>     Partition (partitions.go)
//	meta/next-table-id              decimal; ids are never reused, by tables
//	                                and partitions alike
var nextIDKey = []byte("meta/next-table-id")

func databaseKey(name string) []byte { return []byte("db/" + name) }
func tableKey(id int64) []byte       { return fmt.Appendf(nil, "table/%020d", id) }
func schemaKey(id int64, sid int32) []byte {
	return fmt.Appendf(nil, "schema/%020d/%010d", id, sid)
}

// putTable writes a table's definition and, if withSchema, its current
// schema's columns.
func putTable(b *pebble.Batch, t *TableInfo, withSchema bool) error {
	v, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode table %s: %w", t.Table, err)
	}
	b.Set(tableKey(t.TableID), v, nil)
	if withSchema {
		cols, err := json.Marshal(t.Columns)
		if err != nil {
			return fmt.Errorf("encode table %s schema: %w", t.Table, err)
		}
		b.Set(schemaKey(t.TableID, t.SchemaID), cols, nil)
	}
	return nil
}

// commit syncs b, unless the catalog's disk is known to fail.
func (c *Catalog) commit(b *pebble.Batch) (err error) {
	defer b.Close()
	if err := c.db.WriteErr(); err != nil {
		return err
	}
	defer c.db.Guard(&err)
	return b.Commit(pebble.Sync)
}

// load reads the whole catalog into memory, initializing a new one.
func (c *Catalog) load() error {
	c.mu.databases = map[string]bool{}
	c.mu.tables = map[string]*TableInfo{}
	c.mu.byID = map[int64]*TableInfo{}
	c.mu.schemas = map[int64]map[int32]*arrow.Schema{}
	c.mu.partitions = map[int64]map[string]*Partition{}
	c.mu.partitionByID = map[int64]*Partition{}
	next, closer, err := c.db.Get(nextIDKey)
	switch {
	case err == pebble.ErrNotFound && c.readOnly:
		// Empty, not even its first entries written (or they were only in
		// a log since lost): read as the new catalog it would become.
		c.mu.databases[protocol.DefaultDatabase] = true
		c.mu.nextID = 1
		return nil
	case err == pebble.ErrNotFound:
		b := c.db.NewBatch()
		b.Set(databaseKey(protocol.DefaultDatabase), nil, nil)
		b.Set(nextIDKey, []byte("1"), nil)
		if err := c.commit(b); err != nil {
			return err
		}
		c.mu.databases[protocol.DefaultDatabase] = true
		c.mu.nextID = 1
		return nil
	case err != nil:
		return err
	}
	c.mu.nextID, err = strconv.ParseInt(string(next), 10, 64)
	closer.Close()
	if err != nil {
		return fmt.Errorf("corrupt %s: %w", nextIDKey, err)
	}
	it, err := c.db.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	var partitions [][2][]byte // loaded once their tables are
	for it.First(); it.Valid(); it.Next() {
		if strings.HasPrefix(string(it.Key()), "partition/") {
			partitions = append(partitions, [2][]byte{slices.Clone(it.Key()), slices.Clone(it.Value())})
			continue
		}
		if err := c.loadEntry(string(it.Key()), it.Value()); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	for _, kv := range partitions {
		if err := c.loadPartition(string(kv[0]), kv[1]); err != nil {
			return err
		}
	}
	return nil
}

func (c *Catalog) loadEntry(key string, value []byte) error {
	kind, rest, _ := strings.Cut(key, "/")
	switch kind {
	case "db":
		c.mu.databases[rest] = true
	case "table":
		t := &TableInfo{}
		if err := json.Unmarshal(value, t); err != nil {
			return fmt.Errorf("corrupt %s: %w", key, err)
		}
		c.mu.tables[t.Table] = t
		c.mu.byID[t.TableID] = t
	case "schema":
		var id int64
		var sid int32
		var cols []Column
		if _, err := fmt.Sscanf(rest, "%d/%d", &id, &sid); err != nil {
			return fmt.Errorf("corrupt key %s: %w", key, err)
		}
		if err := json.Unmarshal(value, &cols); err != nil {
			return fmt.Errorf("corrupt %s: %w", key, err)
		}
		s, err := arrowSchema(cols)
		if err != nil {
			return fmt.Errorf("corrupt %s: %w", key, err)
		}
		if c.mu.schemas[id] == nil {
			c.mu.schemas[id] = map[int32]*arrow.Schema{}
		}
		c.mu.schemas[id][sid] = s
	}
	return nil
}

func (c *Catalog) rememberLocked(t *TableInfo) {
	c.mu.tables[t.Table] = t
	c.mu.byID[t.TableID] = t
	if c.mu.schemas[t.TableID] == nil {
		c.mu.schemas[t.TableID] = map[int32]*arrow.Schema{}
	}
	c.mu.schemas[t.TableID][t.SchemaID] = t.ArrowSchema()
}

func (c *Catalog) forgetLocked(t *TableInfo) {
	c.forgetPartitionsLocked(t)
	delete(c.mu.tables, t.Table)
	delete(c.mu.byID, t.TableID)
	delete(c.mu.schemas, t.TableID)
}

func (c *Catalog) deleteTableKeysLocked(b *pebble.Batch, t *TableInfo) {
	c.deletePartitionKeysLocked(b, t)
	b.Delete(tableKey(t.TableID), nil)
	for sid := range c.mu.schemas[t.TableID] {
		b.Delete(schemaKey(t.TableID, sid), nil)
	}
}

// tablesLocked returns the tables of a database ("" = all), sorted by name.
func (c *Catalog) tablesLocked(database string) []*TableInfo {
	out := []*TableInfo{}
	for _, t := range c.mu.tables {
		if database == "" || t.Path().Database == database {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *TableInfo) int { return strings.Compare(a.Table, b.Table) })
	return out
}

func notFound(p protocol.TablePath) error {
	return errs.New(errs.NotFound, "table %s does not exist", p)
}
