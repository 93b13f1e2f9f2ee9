package icebergrest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/icebergrest"
)

// fixture is an engine with a lake-enabled log table fluss.clicks, a plain
// table fluss.plain and a lake-enabled table shop.orders, served by the
// catalog with opts.
func fixture(t *testing.T, opts icebergrest.Options) (*engine.Engine, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	eng, err := engine.Open(ctx, t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	if err := eng.CreateDatabase("shop", false); err != nil {
		t.Fatal(err)
	}
	lakeOn := map[string]string{catalog.OptDatalakeEnabled: "true"}
	for _, spec := range []catalog.TableSpec{
		{Table: "fluss.clicks", Columns: []catalog.Column{{Name: "user", Type: "STRING"}}, Options: lakeOn},
		{Table: "fluss.plain", Columns: []catalog.Column{{Name: "user", Type: "STRING"}}},
		{Table: "shop.orders", Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}}, PrimaryKey: []string{"id"}, Options: lakeOn},
	} {
		if _, err := eng.CreateTable(ctx, spec, false); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(icebergrest.Handler(eng, opts))
	t.Cleanup(srv.Close)
	return eng, srv
}

// call sends method to path under the catalog's URI with the header
// Authorization: authz (none if empty) and returns the status and body.
func call(t *testing.T, srv *httptest.Server, method, path, authz string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+icebergrest.Prefix+path, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

type errorResponse struct {
	Error struct {
		Message string
		Type    string
		Code    int
	}
}

// wantError checks a response is the spec's error shape with code and type.
func wantError(t *testing.T, status int, body []byte, code int, typ string) {
	t.Helper()
	e := decode[errorResponse](t, body)
	if status != code || e.Error.Code != code || e.Error.Type != typ || e.Error.Message == "" {
		t.Fatalf("got %d %s, want %d with type %s", status, body, code, typ)
	}
}

func TestConfigAnnouncesTheReadOnlyEndpoints(t *testing.T) {
	_, srv := fixture(t, icebergrest.Options{})
	status, body := call(t, srv, "GET", "/v1/config", "")
	cfg := decode[struct {
		Defaults, Overrides map[string]string
		Endpoints           []string
	}](t, body)
	if status != 200 || cfg.Defaults == nil || cfg.Overrides == nil {
		t.Fatalf("config: %d %s", status, body)
	}
	for _, e := range cfg.Endpoints {
		if strings.HasPrefix(e, "POST") && !strings.HasSuffix(e, "/metrics") || strings.HasPrefix(e, "DELETE") {
			t.Errorf("config announces the write %s", e)
		}
	}
}

func TestNamespacesAndTables(t *testing.T) {
	_, srv := fixture(t, icebergrest.Options{})
	_, body := call(t, srv, "GET", "/v1/namespaces", "")
	if got := string(body); !strings.Contains(got, `[["fluss"],["shop"]]`) {
		t.Errorf("namespaces: %s", got)
	}
	status, body := call(t, srv, "GET", "/v1/namespaces/shop", "")
	if status != 200 || !strings.Contains(string(body), `"namespace":["shop"]`) {
		t.Errorf("load namespace: %d %s", status, body)
	}
	if status, _ := call(t, srv, "HEAD", "/v1/namespaces/shop", ""); status != 204 {
		t.Errorf("namespace exists: %d, want 204", status)
	}
	if status, _ := call(t, srv, "HEAD", "/v1/namespaces/nope", ""); status != 404 {
		t.Errorf("missing namespace exists: %d, want 404", status)
	}
	status, body = call(t, srv, "GET", "/v1/namespaces/nope", "")
	wantError(t, status, body, 404, "NoSuchNamespaceException")
	status, body = call(t, srv, "GET", "/v1/namespaces/a%1Fb/tables", "")
	wantError(t, status, body, 404, "NoSuchNamespaceException")

	// Only lake-enabled tables are Iceberg tables.
	_, body = call(t, srv, "GET", "/v1/namespaces/fluss/tables", "")
	if got := string(body); got != `{"identifiers":[{"namespace":["fluss"],"name":"clicks"}]}`+"\n" {
		t.Errorf("tables: %s", got)
	}
	if status, _ := call(t, srv, "HEAD", "/v1/namespaces/fluss/tables/clicks", ""); status != 204 {
		t.Errorf("table exists: %d, want 204", status)
	}
	for _, name := range []string{"plain", "nope", "clicks$lake"} {
		status, body = call(t, srv, "GET", "/v1/namespaces/fluss/tables/"+strings.ReplaceAll(name, "$", "%24"), "")
		wantError(t, status, body, 404, "NoSuchTableException")
	}
}

func TestLoadTableServesTheCurrentMetadataFile(t *testing.T) {
	eng, srv := fixture(t, icebergrest.Options{})
	status, body := call(t, srv, "GET", "/v1/namespaces/shop/tables/orders", "")
	if status != 200 {
		t.Fatalf("load table: %d %s", status, body)
	}
	got := decode[struct {
		MetadataLocation string          `json:"metadata-location"`
		Metadata         json.RawMessage `json:"metadata"`
	}](t, body)
	lt, err := eng.LakeTable(context.Background(), "shop.orders")
	if err != nil {
		t.Fatal(err)
	}
	if got.MetadataLocation != lt.MetadataLocation() {
		t.Fatalf("metadata-location %s, want %s", got.MetadataLocation, lt.MetadataLocation())
	}
	// The served metadata is the file's: same table, same schema.
	raw, err := os.ReadFile(strings.TrimPrefix(got.MetadataLocation, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	type meta struct {
		UUID       string            `json:"table-uuid"`
		Location   string            `json:"location"`
		Schemas    json.RawMessage   `json:"schemas"`
		Properties map[string]string `json:"properties"`
	}
	served, file := decode[meta](t, got.Metadata), decode[meta](t, raw)
	if served.UUID != file.UUID || served.Location != file.Location || string(served.Schemas) != string(file.Schemas) {
		t.Errorf("served metadata %s differs from the file %s", got.Metadata, raw)
	}
	if served.Properties["fluxgate.table-id"] == "" {
		t.Errorf("served metadata has no fluxgate.table-id: %v", served.Properties)
	}
	// Beyond the file's properties, write locations no file system has,
	// so that a writer fails before it writes a file into the lake.
	for k, v := range map[string]string{"write.data.path": "fluxgate-read-only://shop/orders/data",
		"write.metadata.path": "fluxgate-read-only://shop/orders/metadata"} {
		if served.Properties[k] != v || file.Properties[k] != "" {
			t.Errorf("%s is %q served and %q in the file, want %q served only", k, served.Properties[k], file.Properties[k], v)
		}
		delete(served.Properties, k)
	}
	if !maps.Equal(served.Properties, file.Properties) {
		t.Errorf("served properties %v, the file's %v", served.Properties, file.Properties)
	}
}

func TestWritesAreRefused(t *testing.T) {
	_, srv := fixture(t, icebergrest.Options{})
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/namespaces"},
		{"DELETE", "/v1/namespaces/fluss"},
		{"POST", "/v1/namespaces/fluss/properties"},
		{"POST", "/v1/namespaces/fluss/tables"},
		{"POST", "/v1/namespaces/fluss/tables/clicks"},
		{"DELETE", "/v1/namespaces/fluss/tables/clicks"},
		{"POST", "/v1/namespaces/fluss/register"},
		{"POST", "/v1/tables/rename"},
		{"POST", "/v1/transactions/commit"},
	} {
		status, body := call(t, srv, c.method, c.path, "")
		wantError(t, status, body, 406, "UnsupportedOperationException")
	}
	if status, _ := call(t, srv, "POST", "/v1/namespaces/fluss/tables/clicks/metrics", ""); status != 204 {
		t.Errorf("metrics report: %d, want 204", status)
	}
}

// TestPermissions: the users, tokens and grants of Flight. ann is an admin,
// bob may read shop.orders only, the token svc may describe fluss.
func TestPermissions(t *testing.T) {
	// bcrypt's lowest cost: the test checks passwords, not their cost.
	hash, err := bcrypt.GenerateFromPassword([]byte("bob-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users, err := auth.ParseUsers(fmt.Appendf(nil, `{"users": [{"name": "ann", "password_bcrypt": %q, "admin": true}, {"name": "bob", "password_bcrypt": %q}],
		"tokens": [{"name": "svc", "token_sha256": %q}]}`, hash, hash, auth.HashToken("svc-token")))
	if err != nil {
		t.Fatal(err)
	}
	authn, err := auth.New(users, auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	grants, err := acl.Open(filepath.Join(t.TempDir(), "acl.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []acl.Grant{
		{Principal: "bob", Resource: acl.Resource{Database: "shop", Table: "orders"}, Operations: []acl.Operation{acl.Read}},
		{Principal: "svc", Resource: acl.Resource{Database: "fluss"}, Operations: []acl.Operation{acl.Describe}},
	} {
		if err := grants.Grant(g); err != nil {
			t.Fatal(err)
		}
	}
	_, srv := fixture(t, icebergrest.Options{Auth: authn, ACL: grants})
	bob := "Basic " + "Ym9iOmJvYi1wYXNzd29yZA==" // bob:bob-password
	svc := "Bearer svc-token"
	annToken, err := authn.Login("ann", "bob-password")
	if err != nil {
		t.Fatal(err)
	}
	ann := "Bearer " + annToken

	for _, authz := range []string{"", "Bearer forged", "Basic Ym9iOndyb25n"} { // bob:wrong
		status, body := call(t, srv, "GET", "/v1/config", authz)
		wantError(t, status, body, 401, "NotAuthorizedException")
	}
	for _, c := range []struct {
		who, authz, path string
		status           int
		body             string // a part of the body
	}{
		{"ann", ann, "/v1/namespaces", 200, `[["fluss"],["shop"]]`},
		{"bob", bob, "/v1/namespaces", 200, `{"namespaces":[["shop"]]}`},
		{"svc", svc, "/v1/namespaces", 200, `{"namespaces":[["fluss"]]}`},
		{"bob", bob, "/v1/namespaces/shop/tables", 200, `"name":"orders"`},
		{"bob", bob, "/v1/namespaces/fluss/tables", 403, "ForbiddenException"},
		{"bob", bob, "/v1/namespaces/shop/tables/orders", 200, `"metadata-location"`},
		{"svc", svc, "/v1/namespaces/fluss/tables", 200, `"name":"clicks"`},
		// describe lists a table; loading it needs read, checked before
		// whether it exists.
		{"svc", svc, "/v1/namespaces/fluss/tables/clicks", 403, "svc may not read"},
		{"svc", svc, "/v1/namespaces/fluss/tables/nope", 403, "ForbiddenException"},
		{"ann", ann, "/v1/namespaces/fluss/tables/clicks", 200, `"metadata-location"`},
	} {
		status, body := call(t, srv, "GET", c.path, c.authz)
		if status != c.status || !strings.Contains(string(body), c.body) {
			t.Errorf("%s GET %s: %d %s, want %d with %s", c.who, c.path, status, body, c.status, c.body)
		}
	}
}
