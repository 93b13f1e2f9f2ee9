package acl

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/errs"
)

func open(t *testing.T, fs vfs.FS, path string) *Store {
	t.Helper()
	s, err := OpenFS(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// memDisk returns a filesystem in memory with an empty directory, and the
// path of a grants file in it: these tests need a filesystem, not the disk
// (the grants file's permissions and syncs are internal/fsio's to test).
func memDisk(t *testing.T) (vfs.FS, string) {
	t.Helper()
	fs := vfs.NewMem()
	if err := fs.MkdirAll("data", 0o755); err != nil {
		t.Fatal(err)
	}
	return fs, fs.PathJoin("data", "acl.json")
}

func mustGrant(t *testing.T, s *Store, g Grant) {
	t.Helper()
	if err := s.Grant(g); err != nil {
		t.Fatalf("grant %+v: %v", g, err)
	}
}

func TestAllowed(t *testing.T) {
	fs, path := memDisk(t)
	s := open(t, fs, path)
	ann, bob, cy, root := auth.Principal{Name: "ann"}, auth.Principal{Name: "bob"}, auth.Principal{Name: "cy"}, auth.Principal{Name: "root", Admin: true}
	mustGrant(t, s, Grant{Principal: "ann", Resource: Resource{Database: "db1"}, Operations: []Operation{Read}})
	mustGrant(t, s, Grant{Principal: "bob", Resource: Resource{Database: "db1", Table: "t"}, Operations: []Operation{Write}})
	mustGrant(t, s, Grant{Principal: "cy", Resource: Resource{Database: AllDatabases}, Operations: []Operation{Describe}})

	for _, c := range []struct {
		p         auth.Principal
		op        Operation
		db, table string
		want      bool
	}{
		{ann, Read, "db1", "t", true},      // a database grant covers its tables
		{ann, Read, "db1", "", true},       // and the database
		{ann, Describe, "db1", "t", true},  // read implies describe
		{ann, Describe, "db1", "", true},   //
		{ann, Write, "db1", "t", false},    // read is not write
		{ann, Read, "db2", "t", false},     // nor another database
		{ann, Create, "db1", "", false},    //
		{bob, Write, "db1", "t", true},     //
		{bob, Describe, "db1", "t", true},  // write implies describe
		{bob, Read, "db1", "t", false},     //
		{bob, Write, "db1", "u", false},    // a table grant covers that table only
		{bob, Describe, "db1", "", false},  // and not its database
		{cy, Describe, "db9", "x", true},   // "*" covers every database
		{cy, Read, "db9", "x", false},      // describe implies nothing
		{root, Drop, "anything", "", true}, // admins may do everything
		{auth.Principal{Name: "nobody"}, Describe, "db1", "t", false},
	} {
		if got := s.Allowed(c.p, c.op, c.db, c.table); got != c.want {
			t.Errorf("%s %s %s.%s: %v, want %v", c.p.Name, c.op, c.db, c.table, got, c.want)
		}
	}
	if !s.Visible(bob, "db1") || s.Visible(bob, "db2") || !s.Visible(ann, "db1") || !s.Visible(cy, "x") {
		t.Error("Visible")
	}
}

func TestGrantRevokeList(t *testing.T) {
	fs, path := memDisk(t)
	s := open(t, fs, path)
	mustGrant(t, s, Grant{Principal: "ann", Resource: Resource{Database: "db1"}, Operations: []Operation{Write, Read}})
	mustGrant(t, s, Grant{Principal: "ann", Resource: Resource{Database: "db1"}, Operations: []Operation{Read, Alter}})
	mustGrant(t, s, Grant{Principal: "bob", Resource: Resource{Database: "db1", Table: "t"}, Operations: []Operation{Read}})
	want := []Grant{
		{Principal: "ann", Resource: Resource{Database: "db1"}, Operations: []Operation{Read, Write, Alter}},
		{Principal: "bob", Resource: Resource{Database: "db1", Table: "t"}, Operations: []Operation{Read}},
	}
	if got := s.List(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("list: %+v", got)
	}
	if got := s.List("bob"); !reflect.DeepEqual(got, want[1:]) {
		t.Fatalf("list bob: %+v", got)
	}

	// Persisted across a reopen.
	if got := open(t, fs, path).List(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen: %+v", got)
	}

	if err := s.Revoke(Grant{Principal: "ann", Resource: Resource{Database: "db1"}, Operations: []Operation{Write, Drop}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Revoke(Grant{Principal: "bob", Resource: Resource{Database: "db1", Table: "t"}, Operations: []Operation{Read}}); err != nil {
		t.Fatal(err)
	}
	want = []Grant{{Principal: "ann", Resource: Resource{Database: "db1"}, Operations: []Operation{Read, Alter}}}
	r := open(t, fs, path)
	if got := r.List(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("after revoke and reopen: %+v", got)
	}
	if r.Allowed(auth.Principal{Name: "ann"}, Write, "db1", "t") || r.Allowed(auth.Principal{Name: "bob"}, Describe, "db1", "t") {
		t.Error("revoked operations still allowed")
	}
	if entries, _ := fs.List(fs.PathDir(path)); len(entries) != 1 {
		t.Errorf("left temporary files: %v", entries)
	}
}

func TestInvalidGrants(t *testing.T) {
	fs, path := memDisk(t)
	s := open(t, fs, path)
	for name, g := range map[string]Grant{
		"unknown operation": {Principal: "a", Resource: Resource{Database: "d"}, Operations: []Operation{"READ"}},
		"no operations":     {Principal: "a", Resource: Resource{Database: "d"}},
		"no principal":      {Resource: Resource{Database: "d"}, Operations: []Operation{Read}},
		"no database":       {Principal: "a", Operations: []Operation{Read}},
		"bad database":      {Principal: "a", Resource: Resource{Database: "d.x"}, Operations: []Operation{Read}},
		"bad table":         {Principal: "a", Resource: Resource{Database: "d", Table: "t$changelog"}, Operations: []Operation{Read}},
		"table of *":        {Principal: "a", Resource: Resource{Database: "*", Table: "t"}, Operations: []Operation{Read}},
	} {
		if err := s.Grant(g); errs.KindOf(err) != errs.InvalidArgument {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	if len(s.List("")) != 0 {
		t.Error("an invalid grant was stored")
	}
	if _, err := ParseOperation("read"); err != nil {
		t.Error(err)
	}
}

// TestConcurrent grants and revokes from many goroutines, each as its own
// principal: each sees its own changes at once, and the file ends holding
// exactly the grants left in force.
func TestConcurrent(t *testing.T) {
	fs, path := memDisk(t)
	s := open(t, fs, path)
	const workers = 4
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			p := auth.Principal{Name: fmt.Sprintf("p%d", i)}
			for _, op := range Operations {
				g := Grant{Principal: p.Name, Resource: Resource{Database: "d"}, Operations: []Operation{op}}
				if err := s.Grant(g); err != nil {
					t.Errorf("grant %+v: %v", g, err)
					return
				}
				if !s.Allowed(p, op, "d", "t") {
					t.Errorf("%s may not %s d.t right after the grant", p.Name, op)
				}
				if err := s.Revoke(g); err != nil {
					t.Errorf("revoke %+v: %v", g, err)
					return
				}
				if s.Allowed(p, op, "d", "t") {
					t.Errorf("%s may still %s d.t after the revoke", p.Name, op)
				}
			}
			if err := s.Grant(Grant{Principal: p.Name, Resource: Resource{Database: "d"}, Operations: []Operation{Read}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var want []Grant
	for i := range workers {
		want = append(want, Grant{Principal: fmt.Sprintf("p%d", i), Resource: Resource{Database: "d"}, Operations: []Operation{Read}})
	}
	if got := s.List(""); !reflect.DeepEqual(got, want) {
		t.Errorf("grants after the workers: %+v, want %+v", got, want)
	}
	if got := open(t, fs, path).List(""); !reflect.DeepEqual(got, want) {
		t.Errorf("grants reopened: %+v, want %+v", got, want)
	}
}
