package acl

import (
	"errors"
	"reflect"
	"syscall"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/diskfault"
)

// A grant that cannot be saved (the disk is full) fails with
// RESOURCE_EXHAUSTED naming the cause, changes nothing in memory or on disk,
// and the next grant once there is room is saved.
func TestGrantOnFullDiskChangesNothing(t *testing.T) {
	fs, path := memDisk(t)
	faults := diskfault.New(fs)
	s, err := OpenFS(faults, path)
	if err != nil {
		t.Fatal(err)
	}
	read := Grant{Principal: "ann", Resource: Resource{Database: "db1"}, Operations: []Operation{Read}}
	mustGrant(t, s, read)

	faults.Set(diskfault.Write, "acl.json", syscall.ENOSPC)
	err = s.Grant(Grant{Principal: "bob", Resource: Resource{Database: "db1"}, Operations: []Operation{Write}})
	if !errs.Is(err, errs.ResourceExhausted) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("grant on a full disk: %v, want resource exhausted caused by ENOSPC", err)
	}
	want := []Grant{read}
	if got := s.List(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("in memory after the failed grant: %+v", got)
	}
	if got := open(t, fs, path).List(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("on disk after the failed grant: %+v", got)
	}

	faults.Clear()
	write := Grant{Principal: "bob", Resource: Resource{Database: "db1"}, Operations: []Operation{Write}}
	mustGrant(t, s, write)
	if got := open(t, fs, path).List(""); !reflect.DeepEqual(got, []Grant{read, write}) {
		t.Fatalf("on disk once there is room: %+v", got)
	}
}
