package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

func openTest(t *testing.T, dir string, opts Options) *Catalog {
	t.Helper()
	c, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustPath(t *testing.T, s string) protocol.TablePath {
	t.Helper()
	p, err := protocol.ParseTablePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func simpleSpec(name string) TableSpec {
	return TableSpec{Table: name, Columns: []Column{{Name: "k", Type: "BIGINT"}, {Name: "v", Type: "STRING"}}, PrimaryKey: []string{"k"}}
}

func wantKind(t *testing.T, what string, err error, k errs.Kind) {
	t.Helper()
	if errs.KindOf(err) != k {
		t.Errorf("%s: got %v (%v), want %v", what, err, errs.KindOf(err), k)
	}
}

func TestDatabases(t *testing.T) {
	c := openTest(t, t.TempDir(), Options{})
	defer c.Close()
	if got := c.ListDatabases(); !slices.Equal(got, []string{"fluss"}) {
		t.Fatalf("new catalog databases = %v", got)
	}
	if err := c.CreateDatabase("shop", false); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "create twice", c.CreateDatabase("shop", false), errs.AlreadyExists)
	if err := c.CreateDatabase("shop", true); err != nil {
		t.Errorf("create if not exists: %v", err)
	}
	wantKind(t, "bad name", c.CreateDatabase("__x", false), errs.InvalidArgument)
	if got := c.ListDatabases(); !slices.Equal(got, []string{"fluss", "shop"}) {
		t.Errorf("databases = %v", got)
	}

	if _, _, err := c.CreateTable(simpleSpec("shop.a"), false); err != nil {
		t.Fatal(err)
	}
	_, err := c.DropDatabase("shop", false, false)
	wantKind(t, "drop non-empty", err, errs.FailedPrecondition)
	_, err = c.DropDatabase("nope", false, false)
	wantKind(t, "drop missing", err, errs.NotFound)
	if ts, err := c.DropDatabase("nope", true, false); err != nil || ts != nil {
		t.Errorf("drop missing if exists = %v, %v", ts, err)
	}
	dropped, err := c.DropDatabase("shop", false, true)
	if err != nil || len(dropped) != 1 || dropped[0].Table != "shop.a" {
		t.Fatalf("drop cascade = %v, %v", dropped, err)
	}
	_, err = c.Table(mustPath(t, "shop.a"))
	wantKind(t, "table of dropped database", err, errs.NotFound)
	_, err = c.TableByID(dropped[0].TableID)
	wantKind(t, "id of dropped table", err, errs.NotFound)
	_, _, err = c.CreateTable(simpleSpec("shop.a"), false)
	wantKind(t, "create in missing database", err, errs.NotFound)
	_, err = c.ListTables("shop")
	wantKind(t, "list missing database", err, errs.NotFound)
}

func TestTables(t *testing.T) {
	c := openTest(t, t.TempDir(), Options{DefaultBucketNum: 4})
	defer c.Close()
	info, created, err := c.CreateTable(simpleSpec("orders"), false)
	if err != nil || !created {
		t.Fatalf("create = %v, %v", created, err)
	}
	if info.Table != "fluss.orders" || info.TableID != 1 || info.SchemaID != 1 || info.CreatedAt == 0 || info.BucketCount() != 4 {
		t.Errorf("created %+v", info)
	}
	_, _, err = c.CreateTable(simpleSpec("fluss.orders"), false)
	wantKind(t, "create twice", err, errs.AlreadyExists)
	again, created, err := c.CreateTable(simpleSpec("orders"), true)
	if err != nil || created || again != info {
		t.Errorf("create if not exists = %v, %v, %v", again, created, err)
	}
	_, _, err = c.CreateTable(TableSpec{Table: "bad"}, true)
	wantKind(t, "invalid spec", err, errs.InvalidArgument)

	if got, err := c.Table(mustPath(t, "orders$changelog")); err != nil || got != info {
		t.Errorf("Table(view) = %v, %v", got, err)
	}
	_, err = c.Table(mustPath(t, "nope"))
	wantKind(t, "missing table", err, errs.NotFound)
	if got, err := c.TableByID(info.TableID); err != nil || got != info {
		t.Errorf("TableByID = %v, %v", got, err)
	}

	if _, _, err := c.CreateTable(simpleSpec("b"), false); err != nil {
		t.Fatal(err)
	}
	ts, err := c.ListTables("fluss")
	if err != nil || len(ts) != 2 || ts[0].Table != "fluss.b" || ts[1].Table != "fluss.orders" {
		t.Errorf("ListTables = %v, %v", ts, err)
	}

	dropped, err := c.DropTable(mustPath(t, "orders"), false)
	if err != nil || dropped != info {
		t.Fatalf("drop = %v, %v", dropped, err)
	}
	_, err = c.DropTable(mustPath(t, "orders"), false)
	wantKind(t, "drop twice", err, errs.NotFound)
	if d, err := c.DropTable(mustPath(t, "orders"), true); d != nil || err != nil {
		t.Errorf("drop if exists = %v, %v", d, err)
	}
	recreated, _, err := c.CreateTable(simpleSpec("orders"), false)
	if err != nil || recreated.TableID == info.TableID || recreated.TableID != 3 {
		t.Errorf("re-created id %d, old %d (%v)", recreated.TableID, info.TableID, err)
	}
	_, err = c.TableByID(info.TableID)
	wantKind(t, "old id", err, errs.NotFound)
}

func TestAlterAndSchemas(t *testing.T) {
	c := openTest(t, t.TempDir(), Options{})
	defer c.Close()
	info, _, err := c.CreateTable(simpleSpec("t"), false)
	if err != nil {
		t.Fatal(err)
	}
	p := mustPath(t, "t")
	altered, err := c.AlterTable(p, map[string]string{"table.log.ttl": "1h"}, nil, []Column{{Name: "x", Type: "INT"}})
	if err != nil || altered.SchemaID != 2 || altered.Option("table.log.ttl") != "1h" {
		t.Fatalf("alter = %+v, %v", altered, err)
	}
	if got, _ := c.Table(p); got != altered {
		t.Errorf("Table after alter returns the old definition")
	}
	_, err = c.AlterTable(p, map[string]string{"bucket.num": "3"}, nil, nil)
	wantKind(t, "alter bucket.num", err, errs.InvalidArgument)
	_, err = c.AlterTable(mustPath(t, "nope"), nil, nil, nil)
	wantKind(t, "alter missing", err, errs.NotFound)

	for sid, n := range map[int32]int{1: 2, 2: 3} {
		s, err := c.SchemaByID(info.TableID, sid)
		if err != nil || s.NumFields() != n {
			t.Errorf("SchemaByID(%d) = %v, %v", sid, s, err)
		}
	}
	_, err = c.SchemaByID(info.TableID, 3)
	wantKind(t, "future schema", err, errs.NotFound)
	_, err = c.SchemaByID(99, 1)
	wantKind(t, "missing table schema", err, errs.NotFound)
}

func TestPersistence(t *testing.T) {
	dir := t.TempDir()
	c := openTest(t, dir, Options{})
	if err := c.CreateDatabase("shop", false); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateDatabase("gone", false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DropDatabase("gone", false, false); err != nil {
		t.Fatal(err)
	}
	spec := TableSpec{Table: "shop.stats", Columns: []Column{{Name: "k", Type: "int"}, {Name: "n", Type: "bigint"}},
		PrimaryKey: []string{"k"}, Options: map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum", "bucket.num": "2"}}
	a, _, err := c.CreateTable(spec, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := c.CreateTable(simpleSpec("dropped"), false)
	if _, err := c.DropTable(b.Path(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AlterTable(a.Path(), nil, nil, []Column{{Name: "note", Type: "varchar(5)"}}); err != nil {
		t.Fatal(err)
	}
	a, _ = c.Table(a.Path())
	// The default database, once dropped, stays dropped.
	if _, err := c.DropDatabase("fluss", false, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	c = openTest(t, dir, Options{})
	defer c.Close()
	if got := c.ListDatabases(); !slices.Equal(got, []string{"shop"}) {
		t.Errorf("databases after reopen = %v", got)
	}
	got, err := c.Table(a.Path())
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := json.Marshal(a)
	j2, _ := json.Marshal(got)
	if string(j1) != string(j2) {
		t.Errorf("reopened definition differs:\n%s\n%s", j1, j2)
	}
	if got.BucketCount() != 2 || got.AggFunction("note") != AggDefault || got.ArrowSchema().NumFields() != 3 {
		t.Errorf("derived state after reopen: %d %q %v", got.BucketCount(), got.AggFunction("note"), got.ArrowSchema())
	}
	if s, err := c.SchemaByID(a.TableID, 1); err != nil || s.NumFields() != 2 {
		t.Errorf("old schema after reopen = %v, %v", s, err)
	}
	if _, err := c.TableByID(b.TableID); errs.KindOf(err) != errs.NotFound {
		t.Errorf("dropped table came back: %v", err)
	}
	next, _, err := c.CreateTable(simpleSpec("shop.new"), false)
	if err != nil || next.TableID != b.TableID+1 {
		t.Errorf("id after reopen = %d, want %d (%v)", next.TableID, b.TableID+1, err)
	}
}

func TestConcurrentCreates(t *testing.T) {
	c := openTest(t, t.TempDir(), Options{})
	defer c.Close()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.CreateTable(simpleSpec(fmt.Sprintf("t%d", i)), false); err != nil {
				t.Error(err)
			}
			_, _ = c.ListTables("")
		}()
	}
	wg.Wait()
	ts, _ := c.ListTables("")
	ids := map[int64]bool{}
	for _, t := range ts {
		ids[t.TableID] = true
	}
	if len(ts) != 8 || len(ids) != 8 {
		t.Errorf("%d tables, %d distinct ids", len(ts), len(ids))
	}
}

func TestOpenOptions(t *testing.T) {
	_, err := Open(t.TempDir(), Options{DefaultBucketNum: 5000})
	wantKind(t, "bucket default too large", err, errs.InvalidArgument)
}

// ReserveIDs raises the next table id, durably, and never lowers it.
func TestReserveIDs(t *testing.T) {
	dir := t.TempDir()
	c := openTest(t, dir, Options{})
	if err := c.ReserveIDs(7); err != nil {
		t.Fatal(err)
	}
	if err := c.ReserveIDs(3); err != nil {
		t.Fatal(err)
	}
	if got := c.NextID(); got != 7 {
		t.Errorf("next id %d after reserving below 7 and below 3, want 7", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = openTest(t, dir, Options{})
	defer c.Close()
	info, _, err := c.CreateTable(simpleSpec("t"), false)
	if err != nil || info.TableID != 7 {
		t.Fatalf("table created after reopen has id %d (%v), want 7", info.TableID, err)
	}
}
