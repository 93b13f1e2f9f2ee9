package flight

// Permissions (PROTOCOL.md §8): the one place where an RPC or action is
// checked against the caller's grants. Every RPC and action calls authorize
// (or filters its answer with may) before it touches the engine, naming the
// operation it needs and the resource it touches. Without authentication
// there is no principal in the context and everything is allowed; so it is
// without an ACL store (Options.ACL nil).

import (
	"context"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// caller returns the principal that checks apply to; ok is false when
// nothing is checked.
func (s *Service) caller(ctx context.Context) (auth.Principal, bool) {
	if s.acl == nil {
		return auth.Principal{}, false
	}
	return auth.FromContext(ctx)
}

// authorize returns PERMISSION_DENIED, and logs it, unless the caller may do
// op on r.
func (s *Service) authorize(ctx context.Context, rpc string, op acl.Operation, r acl.Resource) error {
	p, ok := s.caller(ctx)
	if !ok || s.acl.Allowed(p, op, r.Database, r.Table) {
		return nil
	}
	return s.denied(rpc, p, string(op), r.String())
}

// authorizeTable is authorize on a table name, `[database.]table[$view]`; a
// view counts as its table.
func (s *Service) authorizeTable(ctx context.Context, rpc string, op acl.Operation, name string) error {
	if _, ok := s.caller(ctx); !ok {
		return nil
	}
	p, err := protocol.ParseTablePath(name)
	if err != nil {
		return err
	}
	return s.authorize(ctx, rpc, op, acl.Resource{Database: p.Database, Table: p.Table})
}

// authorizeDatabaseOf is authorize on the database of a table name: creating
// a table needs create on its database.
func (s *Service) authorizeDatabaseOf(ctx context.Context, rpc string, op acl.Operation, name string) error {
	if _, ok := s.caller(ctx); !ok {
		return nil
	}
	p, err := protocol.ParseTablePath(name)
	if err != nil {
		return err
	}
	return s.authorize(ctx, rpc, op, acl.Resource{Database: p.Database})
}

// authorizeAdmin lets only admins through: managing grants.
func (s *Service) authorizeAdmin(ctx context.Context, rpc, what string) error {
	if s.acl == nil {
		return errs.New(errs.FailedPrecondition, "%s: permissions need users (serve --users)", what)
	}
	p, ok := auth.FromContext(ctx)
	if !ok || p.Admin {
		return nil
	}
	return s.denied(rpc, p, what, "grants (admins only)")
}

func (s *Service) denied(rpc string, p auth.Principal, op, resource string) error {
	s.log.Warn("permission denied", "rpc", rpc, "principal", p.Name, "operation", op, "resource", resource)
	return errs.New(errs.PermissionDenied, "%s may not %s %s", p.Name, op, resource)
}

// may reports, without logging, whether the caller may do op on table of db
// (table "": the database); listings use it to leave out what the caller may
// not describe.
func (s *Service) may(ctx context.Context, op acl.Operation, db, table string) bool {
	p, ok := s.caller(ctx)
	return !ok || s.acl.Allowed(p, op, db, table)
}

// maysee reports whether the caller may see that database db exists.
func (s *Service) maysee(ctx context.Context, db string) bool {
	p, ok := s.caller(ctx)
	return !ok || s.acl.Visible(p, db)
}

// authorizeDatabaseListing checks a listing of database's tables ("": of
// every database): the name must be one a database can have, and the caller
// must see the database (maysee), so that a listing does not tell which
// databases exist.
func (s *Service) authorizeDatabaseListing(ctx context.Context, rpc, database string) error {
	if database != "" {
		if err := protocol.ValidateDatabaseName(database); err != nil {
			return err
		}
	}
	p, ok := s.caller(ctx)
	if !ok || database == "" || s.acl.Visible(p, database) {
		return nil
	}
	return s.denied(rpc, p, string(acl.Describe), acl.Resource{Database: database}.String())
}

// lookupOp is what a lookup needs: write when it inserts missing keys.
func lookupOp(insertIfNotExists bool) acl.Operation {
	if insertIfNotExists {
		return acl.Write
	}
	return acl.Read
}
