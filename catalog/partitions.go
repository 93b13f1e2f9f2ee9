package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// DefaultMaxPartitions is max.partition.num, the most partitions a table may
// have, when Options leaves it out (Fluss's default).
const DefaultMaxPartitions = 1000

// Partition is a stored partition of a partitioned table. Its id comes from
// the table-id sequence, so it never clashes with a table's (the engine keeps
// a partition's data under its id as it keeps a table's). A *Partition handed
// out is immutable.
type Partition struct {
	protocol.PartitionInfo
	TableID   int64 `json:"table_id"`
	CreatedAt int64 `json:"created_at"` // epoch milliseconds

	values []string // in partition-key order
}

// Values are the partition's values in partition-key order.
func (p *Partition) Values() []string { return p.values }

// ForPartition returns the definition a partition's data lives under: the
// table's, with the partition's id as its table id, since a partition is
// stored as a table of its own (log directory, primary-key state).
func (t *TableInfo) ForPartition(p *Partition) *TableInfo {
	out := &TableInfo{TableInfo: t.TableInfo, d: t.d}
	out.TableID = p.PartitionID
	out.d.partition = p
	return out
}

// Partition is the partition of a definition made by ForPartition, else nil.
func (t *TableInfo) Partition() *Partition { return t.d.partition }

// NotPartitioned is the error of a partition action on a table without
// partition keys.
func NotPartitioned(t *TableInfo) error {
	return errs.New(errs.FailedPrecondition, "table %s is not partitioned", t.Table)
}

// PartitionNotFound is the error of a partition that does not exist, naming
// it by its keys and values.
func PartitionNotFound(t *TableInfo, values []string) error {
	return errs.New(errs.NotFound, "partition %s of table %s does not exist", partition.Qualified(t.PartitionKeys, values), t.Table)
}

// CreatePartition creates a partition of a partitioned table, given by its
// spec. If it exists, that is an error unless ifNotExists, when the existing
// partition is returned with created false.
func (c *Catalog) CreatePartition(path protocol.TablePath, spec map[string]string, ifNotExists bool) (p *Partition, created bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.mu.tables[path.String()]
	if t == nil {
		return nil, false, notFound(path)
	}
	if !t.IsPartitioned() {
		return nil, false, NotPartitioned(t)
	}
	values, err := partition.Resolve(t.Table, t.PartitionKeys, spec, true)
	if err != nil {
		return nil, false, err
	}
	name := partition.Name(values)
	parts := c.mu.partitions[t.TableID]
	if old := parts[name]; old != nil {
		if ifNotExists {
			return old, false, nil
		}
		return nil, false, errs.New(errs.AlreadyExists, "partition %s of table %s already exists", partition.Qualified(t.PartitionKeys, values), t.Table)
	}
	if len(parts) >= c.maxPartitions {
		return nil, false, errs.New(errs.ResourceExhausted, "table %s has %d partitions, the limit max.partition.num is %d; drop some first",
			t.Table, len(parts), c.maxPartitions)
	}
	p = &Partition{
		PartitionInfo: protocol.PartitionInfo{PartitionID: c.mu.nextID, PartitionName: name, Spec: specOf(t.PartitionKeys, values)},
		TableID:       t.TableID,
		CreatedAt:     time.Now().UnixMilli(),
		values:        values,
	}
	v, err := json.Marshal(p)
	if err != nil {
		return nil, false, fmt.Errorf("encode partition %s of %s: %w", name, t.Table, err)
	}
	b := c.db.NewBatch()
	b.Set(nextIDKey, []byte(strconv.FormatInt(p.PartitionID+1, 10)), nil)
	b.Set(partitionKey(t.TableID, name), v, nil)
	if err := c.commit(b); err != nil {
		return nil, false, fmt.Errorf("create partition %s of %s: %w", name, t.Table, err)
	}
	c.mu.nextID++
	c.rememberPartitionLocked(p)
	return p, true, nil
}

// DropPartition forgets a partition and returns it so that the caller can
// delete its data. A missing partition is an error unless ifExists, when
// DropPartition returns nil.
func (c *Catalog) DropPartition(path protocol.TablePath, spec map[string]string, ifExists bool) (*Partition, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.mu.tables[path.String()]
	if t == nil {
		return nil, notFound(path)
	}
	if !t.IsPartitioned() {
		return nil, NotPartitioned(t)
	}
	values, err := partition.Resolve(t.Table, t.PartitionKeys, spec, false)
	if err != nil {
		return nil, err
	}
	p := c.mu.partitions[t.TableID][partition.Name(values)]
	if p == nil {
		if ifExists {
			return nil, nil
		}
		return nil, PartitionNotFound(t, values)
	}
	b := c.db.NewBatch()
	b.Delete(partitionKey(t.TableID, p.PartitionName), nil)
	if err := c.commit(b); err != nil {
		return nil, fmt.Errorf("drop partition %s of %s: %w", p.PartitionName, t.Table, err)
	}
	delete(c.mu.partitions[t.TableID], p.PartitionName)
	delete(c.mu.partitionByID, p.PartitionID)
	return p, nil
}

// Partitions returns a table's partitions in name order; a table without
// partitions (or not partitioned) has none.
func (c *Catalog) Partitions(tableID int64) []*Partition {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.partitionsLocked(tableID)
}

func (c *Catalog) partitionsLocked(tableID int64) []*Partition {
	out := make([]*Partition, 0, len(c.mu.partitions[tableID]))
	for _, p := range c.mu.partitions[tableID] {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Partition) int { return strings.Compare(a.PartitionName, b.PartitionName) })
	return out
}

// PartitionByName returns a partition of a table by its name.
func (c *Catalog) PartitionByName(t *TableInfo, name string) (*Partition, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if p := c.mu.partitions[t.TableID][name]; p != nil {
		return p, nil
	}
	values, err := partition.Values(t.PartitionKeys, name)
	if err != nil {
		return nil, errs.New(errs.NotFound, "partition %s of table %s does not exist", errs.Quote(name), t.Table)
	}
	return nil, PartitionNotFound(t, values)
}

// PartitionByID returns a live partition by id; a dropped partition's id is
// not found.
func (c *Catalog) PartitionByID(id int64) (*Partition, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if p := c.mu.partitionByID[id]; p != nil {
		return p, nil
	}
	return nil, errs.New(errs.NotFound, "partition id %d does not exist (dropped, or dropped and re-created under a new id)", id)
}

// On-disk: partition/<table id, 20 digits>/<partition name> → Partition.
func partitionKey(tableID int64, name string) []byte {
	return fmt.Appendf(nil, "partition/%020d/%s", tableID, name)
}

func (c *Catalog) loadPartition(key string, value []byte) error {
	p := &Partition{}
	if err := json.Unmarshal(value, p); err != nil {
		return fmt.Errorf("corrupt %s: %w", key, err)
	}
	t := c.mu.byID[p.TableID]
	if t == nil {
		return fmt.Errorf("corrupt %s: table id %d does not exist", key, p.TableID)
	}
	values, err := partition.Values(t.PartitionKeys, p.PartitionName)
	if err != nil {
		return fmt.Errorf("corrupt %s: %w", key, err)
	}
	p.values = values
	c.rememberPartitionLocked(p)
	return nil
}

func (c *Catalog) rememberPartitionLocked(p *Partition) {
	if c.mu.partitions[p.TableID] == nil {
		c.mu.partitions[p.TableID] = map[string]*Partition{}
	}
	c.mu.partitions[p.TableID][p.PartitionName] = p
	c.mu.partitionByID[p.PartitionID] = p
}

// deletePartitionKeysLocked deletes the partitions of a table being dropped.
func (c *Catalog) deletePartitionKeysLocked(b *pebble.Batch, t *TableInfo) {
	for name := range c.mu.partitions[t.TableID] {
		b.Delete(partitionKey(t.TableID, name), nil)
	}
}

func (c *Catalog) forgetPartitionsLocked(t *TableInfo) {
	for _, p := range c.mu.partitions[t.TableID] {
		delete(c.mu.partitionByID, p.PartitionID)
	}
	delete(c.mu.partitions, t.TableID)
}

func specOf(keys, values []string) protocol.PartitionSpec {
	spec := make(protocol.PartitionSpec, len(keys))
	for i, k := range keys {
		spec[k] = values[i]
	}
	return spec
}
