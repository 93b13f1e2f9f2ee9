// Package icebergrest serves fluxgate's lake as an Iceberg REST catalog
// (apache/iceberg open-api/rest-catalog-open-api.yaml) under /iceberg/v1/,
// so that Spark, Trino, DuckDB and pyiceberg find every lake table with one
// URL. It is read-only: databases are namespaces, lake-enabled tables are
// tables, and every write is refused, since fluxgate is the lake's only
// writer. Callers are the users and tokens of Flight, with the same table
// permissions (PROTOCOL.md §7.5, §8). It owns no lake I/O: the engine opens
// the tables, and readers read the files the metadata names.
package icebergrest

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/lake"
)

// Prefix is where the catalog is served: clients take
// http://<host>:<port>/iceberg as the catalog URI.
const Prefix = "/iceberg"

// Tables is what the catalog serves; *engine.Engine is one.
type Tables interface {
	ListDatabases() []string
	// LakeTableNames lists a database's lake-enabled tables; it is
	// NOT_FOUND for a database that does not exist.
	LakeTableNames(database string) ([]string, error)
	// LakeTable is NOT_FOUND for a table that does not exist or is not
	// lake enabled.
	LakeTable(ctx context.Context, name string) (*lake.Table, error)
}

// Options configure the catalog. The zero value serves everything to
// everyone, as Flight does without users.
type Options struct {
	// Auth, when set, requires every request to name a user or token.
	Auth *auth.Authenticator
	// ACL, with Auth, limits what each caller sees and loads.
	ACL    *acl.Store
	Logger *slog.Logger
}

// Handler returns the catalog's HTTP handler for the paths under Prefix.
func Handler(tables Tables, opts Options) http.Handler {
	s := &server{tables: tables, auth: opts.Auth, acl: opts.ACL, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	// GET patterns answer HEAD too: the existence checks.
	mux.HandleFunc("GET "+Prefix+"/v1/config", s.config)
	mux.HandleFunc("GET "+Prefix+"/v1/namespaces", s.listNamespaces)
	mux.HandleFunc("GET "+Prefix+"/v1/namespaces/{namespace}", s.loadNamespace)
	mux.HandleFunc("GET "+Prefix+"/v1/namespaces/{namespace}/tables", s.listTables)
	mux.HandleFunc("GET "+Prefix+"/v1/namespaces/{namespace}/tables/{table}", s.loadTable)
	// Scan reports are no change to the lake: taken and dropped.
	mux.HandleFunc("POST "+Prefix+"/v1/namespaces/{namespace}/tables/{table}/metrics", s.reportMetrics)
	mux.HandleFunc(Prefix+"/", s.refuse)
	return s.authenticate(mux)
}

type server struct {
	tables Tables
	auth   *auth.Authenticator
	acl    *acl.Store
	log    *slog.Logger
}

type principalKey struct{}

// authenticate puts the caller's principal in the request's context, or
// answers 401 without one (when users are configured).
func (s *server) authenticate(next http.Handler) http.Handler {
	if s.auth == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.auth.Request(r)
		if err != nil {
			if auth.Throttled(err) {
				auth.SetRetryAfter(w.Header(), err)
				writeError(w, http.StatusTooManyRequests, "TooManyRequestsException", err.Error())
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="fluxgate", Basic realm="fluxgate"`)
			writeError(w, http.StatusUnauthorized, "NotAuthorizedException", err.Error())
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// caller returns the principal that permissions apply to; ok is false when
// nothing is checked.
func (s *server) caller(r *http.Request) (auth.Principal, bool) {
	if s.acl == nil {
		return auth.Principal{}, false
	}
	p, ok := r.Context().Value(principalKey{}).(auth.Principal)
	return p, ok
}

// may reports whether the caller may do op on table of db ("": the database).
func (s *server) may(r *http.Request, op acl.Operation, db, table string) bool {
	p, ok := s.caller(r)
	return !ok || s.acl.Allowed(p, op, db, table)
}

// sees reports whether the caller may see that database db exists.
func (s *server) sees(r *http.Request, db string) bool {
	p, ok := s.caller(r)
	return !ok || s.acl.Visible(p, db)
}

// denied answers 403 and logs the denial as Flight does.
func (s *server) denied(w http.ResponseWriter, r *http.Request, op acl.Operation, res acl.Resource) {
	p, _ := s.caller(r)
	s.log.Warn("permission denied", "rpc", "iceberg "+r.Method+" "+r.URL.Path, "principal", p.Name, "operation", string(op), "resource", res.String())
	writeError(w, http.StatusForbidden, "ForbiddenException", p.Name+" may not "+string(op)+" "+res.String())
}
