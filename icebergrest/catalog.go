package icebergrest

// The catalog's routes: config, namespaces and tables, read-only.

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// endpoints are the routes served, announced by /v1/config so that clients
// call nothing else (the spec's default set includes the writes).
var endpoints = []string{
	"GET /v1/{prefix}/namespaces",
	"GET /v1/{prefix}/namespaces/{namespace}",
	"HEAD /v1/{prefix}/namespaces/{namespace}",
	"GET /v1/{prefix}/namespaces/{namespace}/tables",
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
}

func (s *server) config(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{
		"defaults":  map[string]string{},
		"overrides": map[string]string{},
		"endpoints": endpoints,
	})
}

// listNamespaces lists the databases the caller may see. Namespaces have
// one level, so a parent has no children.
func (s *server) listNamespaces(w http.ResponseWriter, r *http.Request) {
	namespaces := [][]string{}
	if parent := r.URL.Query().Get("parent"); parent != "" {
		if _, ok := s.database(w, r, parent); ok {
			writeJSON(w, map[string]any{"namespaces": namespaces})
		}
		return
	}
	for _, db := range s.tables.ListDatabases() {
		if s.sees(r, db) {
			namespaces = append(namespaces, []string{db})
		}
	}
	writeJSON(w, map[string]any{"namespaces": namespaces})
}

func (s *server) loadNamespace(w http.ResponseWriter, r *http.Request) {
	db, ok := s.database(w, r, r.PathValue("namespace"))
	if !ok {
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, map[string]any{"namespace": []string{db}, "properties": map[string]string{}})
}

// listTables lists the namespace's lake-enabled tables that the caller may
// describe.
func (s *server) listTables(w http.ResponseWriter, r *http.Request) {
	db, ok := s.database(w, r, r.PathValue("namespace"))
	if !ok {
		return
	}
	names, err := s.tables.LakeTableNames(db)
	if err != nil {
		writeErr(w, err, "NoSuchNamespaceException")
		return
	}
	type ident struct {
		Namespace []string `json:"namespace"`
		Name      string   `json:"name"`
	}
	identifiers := []ident{}
	for _, name := range names {
		if s.may(r, acl.Describe, db, name) {
			identifiers = append(identifiers, ident{Namespace: []string{db}, Name: name})
		}
	}
	writeJSON(w, map[string]any{"identifiers": identifiers})
}

// loadTable returns a table's current metadata and where its file is; it
// needs read on the table, checked before the table is looked up.
func (s *server) loadTable(w http.ResponseWriter, r *http.Request) {
	db, ok := namespace(w, r.PathValue("namespace"))
	if !ok {
		return
	}
	name := r.PathValue("table")
	if !s.may(r, acl.Read, db, name) {
		s.denied(w, r, acl.Read, acl.Resource{Database: db, Table: name})
		return
	}
	path, err := protocol.ParseTablePath(db + "." + name)
	if err != nil || path.View != "" {
		writeError(w, http.StatusNotFound, "NoSuchTableException", "table "+db+"."+name+" does not exist")
		return
	}
	lt, err := s.tables.LakeTable(r.Context(), path.String())
	if err != nil {
		writeErr(w, err, "NoSuchTableException")
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	meta, err := readOnlyMetadata(lt.Metadata(), path)
	if err != nil {
		writeErr(w, err, "NoSuchTableException")
		return
	}
	writeJSON(w, map[string]any{
		"metadata-location": lt.MetadataLocation(),
		"metadata":          meta,
		"config":            map[string]string{},
	})
}

// readOnlyScheme is the scheme of the write locations the served metadata
// names: no file system has it.
const readOnlyScheme = "fluxgate-read-only"

// readOnlyMetadata is a table's metadata as served: its file's, with
// write.data.path and write.metadata.path set to URIs of readOnlyScheme.
// The spec gives a catalog no way to refuse a write before the client
// writes its files (the config's endpoints say that no commit is served,
// but Spark and pyiceberg check them only when they commit), and refused
// writes left files in fluxgate's lake. With these properties a writer
// fails at its first data or manifest file, and the readers, which follow
// the paths the metadata names, never use them.
func readOnlyMetadata(meta table.Metadata, path protocol.TablePath) (json.RawMessage, error) {
	raw, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	props := map[string]string{}
	if p, ok := fields["properties"]; ok {
		if err := json.Unmarshal(p, &props); err != nil {
			return nil, err
		}
	}
	where := readOnlyScheme + "://" + path.Database + "/" + path.Table
	props["write.data.path"], props["write.metadata.path"] = where+"/data", where+"/metadata"
	if fields["properties"], err = json.Marshal(props); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}

func (s *server) reportMetrics(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusNoContent)
}

// refuse answers every other route: writes are the server's own, and reads
// of what fluxgate does not keep (views, functions, scan planning) are not
// served.
func (s *server) refuse(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		writeError(w, http.StatusNotFound, "NoSuchResourceException", r.URL.Path+" is not served: this catalog serves namespaces and tables only")
		return
	}
	writeError(w, http.StatusNotAcceptable, "UnsupportedOperationException",
		"fluxgate is the only writer of its lake: create, alter and drop tables through fluxgate (create-table, alter-table, drop-table); this catalog is read-only")
}

// database checks a namespace path parameter and that the caller sees the
// database, and that it exists; otherwise it answers and ok is false.
func (s *server) database(w http.ResponseWriter, r *http.Request, raw string) (db string, ok bool) {
	if db, ok = namespace(w, raw); !ok {
		return "", false
	}
	if !s.sees(r, db) {
		s.denied(w, r, acl.Describe, acl.Resource{Database: db})
		return "", false
	}
	if _, err := s.tables.LakeTableNames(db); err != nil {
		writeErr(w, err, "NoSuchNamespaceException")
		return "", false
	}
	return db, true
}

// namespace parses a one-level namespace; fluxgate has no nested ones (the
// spec separates levels with 0x1F).
func namespace(w http.ResponseWriter, raw string) (string, bool) {
	if strings.Contains(raw, "\x1f") || protocol.ValidateDatabaseName(raw) != nil {
		writeError(w, http.StatusNotFound, "NoSuchNamespaceException", "namespace "+strings.ReplaceAll(raw, "\x1f", ".")+" does not exist: fluxgate's namespaces are its databases, one level")
		return "", false
	}
	return raw, true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
