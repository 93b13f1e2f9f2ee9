// Package acl is who may do what: grants of operations on databases and
// tables to principals, persisted; checking them (PROTOCOL.md §8). Not who a
// caller is (package auth).
//
// The model is Fluss's: the operations read, write, create, drop, alter and
// describe on the resources "all databases" ⊃ a database ⊃ one of its tables.
// A grant on a database covers its tables, a grant on "*" covers every
// database; read, write, create, drop and alter each imply describe. Only
// grants exist (no denials). Admins may do everything.
//
// The grants are one JSON file, {"grants": [Grant...]}, rewritten atomically
// (temporary file, fsync, rename) on every change.
package acl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/fsio"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Operation is what a grant allows.
type Operation string

// The operations.
const (
	Read     Operation = "read"
	Write    Operation = "write"
	Create   Operation = "create"
	Drop     Operation = "drop"
	Alter    Operation = "alter"
	Describe Operation = "describe"
)

// Operations lists every operation.
var Operations = []Operation{Read, Write, Create, Drop, Alter, Describe}

// ParseOperation parses a lower-case operation name.
func ParseOperation(s string) (Operation, error) {
	op := Operation(s)
	if slices.Contains(Operations, op) {
		return op, nil
	}
	return "", errs.New(errs.InvalidArgument, "unknown operation %s: want one of read, write, create, drop, alter, describe", errs.Quote(s))
}

// AllDatabases is the Database of a Resource that means every database.
const AllDatabases = "*"

// Resource is what a grant is on: a table, a whole database (Table ""), or
// every database (Database AllDatabases, Table "").
type Resource struct {
	Database string `json:"database"`
	Table    string `json:"table,omitempty"`
}

func (r Resource) String() string {
	switch {
	case r.Database == AllDatabases:
		return "all databases"
	case r.Table == "":
		return "database " + r.Database
	}
	return "table " + r.Database + "." + r.Table
}

// Validate checks the names of r.
func (r Resource) Validate() error {
	if r.Database == AllDatabases {
		if r.Table != "" {
			return errs.New(errs.InvalidArgument, `a grant on database "*" cannot name a table`)
		}
		return nil
	}
	if r.Table == "" {
		return protocol.ValidateDatabaseName(r.Database)
	}
	p, err := protocol.ParseTablePath(r.Database + "." + r.Table)
	if err != nil {
		return err
	}
	if p.View != "" {
		return errs.New(errs.InvalidArgument, "grants are on tables, not on their views: %s", errs.Quote(r.Table))
	}
	return nil
}

// Grant gives a principal (a user or token name) operations on a resource.
type Grant struct {
	Principal string `json:"principal"`
	Resource
	Operations []Operation `json:"operations"`
}

type key struct {
	principal string
	Resource
}

type opSet map[Operation]bool

// Store holds the grants. It is safe for concurrent use.
type Store struct {
	fs   vfs.FS
	path string

	mu     sync.RWMutex
	grants map[key]opSet
}

type file struct {
	Grants []Grant `json:"grants"`
}

// Open loads the grants at path; a missing file is no grants.
func Open(path string) (*Store, error) { return OpenFS(vfs.Default, path) }

// OpenFS is Open on the filesystem fsys.
func OpenFS(fsys vfs.FS, path string) (*Store, error) {
	s := &Store{fs: fsys, path: path, grants: map[key]opSet{}}
	raw, err := fsio.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("grants file %s: %w", path, err)
	}
	for _, g := range f.Grants {
		if err := g.validate(); err != nil {
			return nil, fmt.Errorf("grants file %s: %w", path, err)
		}
		k := key{g.Principal, g.Resource}
		if s.grants[k] == nil {
			s.grants[k] = opSet{}
		}
		for _, op := range g.Operations {
			s.grants[k][op] = true
		}
	}
	return s, nil
}

func (g Grant) validate() error {
	if g.Principal == "" {
		return errs.New(errs.InvalidArgument, `a grant needs a "principal"`)
	}
	if err := protocol.ValidateID("principal", g.Principal); err != nil {
		return err
	}
	if g.Database == "" {
		return errs.New(errs.InvalidArgument, `a grant needs a "database" (a name, or "*" for all)`)
	}
	if err := g.Resource.Validate(); err != nil {
		return err
	}
	if len(g.Operations) == 0 {
		return errs.New(errs.InvalidArgument, `a grant needs "operations"`)
	}
	for _, op := range g.Operations {
		if _, err := ParseOperation(string(op)); err != nil {
			return err
		}
	}
	return nil
}

// Allowed reports whether p may do op on table of database db (table "" is
// the database itself).
func (s *Store) Allowed(p auth.Principal, op Operation, db, table string) bool {
	if p.Admin {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	covering := []Resource{{Database: AllDatabases}, {Database: db}}
	if table != "" {
		covering = append(covering, Resource{Database: db, Table: table})
	}
	for _, r := range covering {
		if ops := s.grants[key{p.Name, r}]; ops[op] || (op == Describe && len(ops) > 0) {
			return true
		}
	}
	return false
}

// Visible reports whether p may see that database db exists: it may describe
// the database, or holds a grant on one of its tables.
func (s *Store) Visible(p auth.Principal, db string) bool {
	if s.Allowed(p, Describe, db, "") {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k, ops := range s.grants {
		if k.principal == p.Name && k.Database == db && len(ops) > 0 {
			return true
		}
	}
	return false
}

// Grant adds g's operations to what its principal holds on its resource.
func (s *Store) Grant(g Grant) error {
	if err := g.validate(); err != nil {
		return err
	}
	return s.update(g, func(ops opSet, op Operation) { ops[op] = true })
}

// Revoke removes g's operations from what its principal holds on its
// resource. Revoking what was never granted is not an error. It does not
// touch grants on other resources: revoking on a table leaves a grant on its
// database in force.
func (s *Store) Revoke(g Grant) error {
	if err := g.validate(); err != nil {
		return err
	}
	return s.update(g, func(ops opSet, op Operation) { delete(ops, op) })
}

func (s *Store) update(g Grant, change func(opSet, Operation)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{g.Principal, g.Resource}
	next := opSet{}
	for op := range s.grants[k] {
		next[op] = true
	}
	for _, op := range g.Operations {
		change(next, op)
	}
	old, had := s.grants[k]
	if len(next) == 0 {
		delete(s.grants, k)
	} else {
		s.grants[k] = next
	}
	if err := s.save(); err != nil {
		if had {
			s.grants[k] = old
		} else {
			delete(s.grants, k)
		}
		return err
	}
	return nil
}

// List returns the grants of principal, or every grant when principal is
// "", sorted by principal, database and table, each with its operations in
// the order of Operations.
func (s *Store) List(principal string) []Grant {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list(principal)
}

func (s *Store) list(principal string) []Grant {
	out := []Grant{}
	for k, ops := range s.grants {
		if principal != "" && k.principal != principal {
			continue
		}
		g := Grant{Principal: k.principal, Resource: k.Resource}
		for _, op := range Operations {
			if ops[op] {
				g.Operations = append(g.Operations, op)
			}
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return strings.Compare(a.Principal+"\x00"+a.Database+"\x00"+a.Table, b.Principal+"\x00"+b.Database+"\x00"+b.Table) < 0
	})
	return out
}

// save writes every grant to the file atomically. The caller holds s.mu.
func (s *Store) save() error {
	raw, err := json.MarshalIndent(file{Grants: s.list("")}, "", "  ")
	if err != nil {
		return err
	}
	if err := fsio.WriteFileAtomic(s.fs, s.path, append(raw, '\n'), 0o600); err != nil {
		kind := errs.Unavailable
		if errors.Is(err, syscall.ENOSPC) {
			kind = errs.ResourceExhausted
		}
		return errs.New(kind, "saving grants: %w", err)
	}
	return nil
}
