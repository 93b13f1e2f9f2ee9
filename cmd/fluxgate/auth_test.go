package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/server"
)

// writeUsers writes a users file: ann/ann-pw (admin), the static token
// "svc-token" named svc-etl, and secret as token_secret.
func writeUsers(t *testing.T, secret string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte("ann-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{
		"users":        []map[string]any{{"name": "ann", "password_bcrypt": string(h), "admin": true}},
		"tokens":       []map[string]any{{"name": "svc-etl", "token_sha256": auth.HashToken("svc-token")}},
		"token_secret": secret,
	})
	path := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startAuthServer starts a server on a loopback port with args after the
// data, listen and http flags; it stops at the end of the test.
func startAuthServer(t *testing.T, args ...string) *server.Server {
	t.Helper()
	return startAuthServerAt(t, nil, args...)
}

// startAuthServerAt is startAuthServer with now as the tokens' clock.
func startAuthServerAt(t *testing.T, now func() time.Time, args ...string) *server.Server {
	t.Helper()
	cfg, err := parseServeFlags(append([]string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--http", ""}, args...))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Now = now
	srv, err := server.Start(t.Context(), &cfg.Config, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return srv
}

func dial(t *testing.T, addr string, opts ...client.Option) (*client.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, opts...)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// listTables is one authenticated call.
func listTables(c *client.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.ListTables(ctx, "")
	return err
}

func TestAuthEndToEnd(t *testing.T) {
	secret := auth.NewSecret()
	srv := startAuthServer(t, "--users", writeUsers(t, secret))
	addr := srv.FlightAddr()

	wantUnauthenticated := func(name string, err error) {
		t.Helper()
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: %v, want UNAUTHENTICATED", name, err)
		}
	}

	// No token.
	anon, err := dial(t, addr)
	if err != nil {
		t.Fatal(err)
	}
	wantUnauthenticated("no token", listTables(anon))
	// ListActions needs nothing (PROTOCOL.md §8): Flight clients ask for it
	// before they sign in.
	if _, err := anon.ListActions(context.Background()); err != nil {
		t.Errorf("no token, ListActions: %v", err)
	}

	// Bad token.
	bad, _ := dial(t, addr, client.WithBearerToken("not-a-token"))
	wantUnauthenticated("bad token", listTables(bad))
	_, err = bad.ListActions(context.Background())
	wantUnauthenticated("bad token, ListActions", err)

	// A forged signed token (right shape, wrong secret).
	other, _ := auth.New(mustUsers(t, auth.NewSecret()), auth.Options{})
	forged, _ := dial(t, addr, client.WithBearerToken(other.Issue(auth.Principal{Name: "ann", Admin: true})))
	wantUnauthenticated("token signed with another secret", listTables(forged))

	// An expired token, signed with the server's secret (by a "replica" whose
	// clock is two hours behind).
	past, _ := auth.New(mustUsers(t, secret), auth.Options{Now: func() time.Time { return time.Now().Add(-2 * time.Hour) }})
	expired, _ := dial(t, addr, client.WithBearerToken(past.Issue(auth.Principal{Name: "ann"})))
	wantUnauthenticated("expired token", listTables(expired))

	// Wrong password, unknown user: the handshake in Dial fails.
	_, err = dial(t, addr, client.WithBasicAuth("ann", "wrong"))
	wantUnauthenticated("wrong password", err)
	_, err = dial(t, addr, client.WithBasicAuth("nobody", "ann-pw"))
	wantUnauthenticated("unknown user", err)
	// A handshake without credentials.
	if hs, err := anon.Flight().Handshake(context.Background()); err != nil {
		wantUnauthenticated("handshake without credentials", err)
	} else {
		hs.CloseSend()
		_, err := hs.Recv()
		wantUnauthenticated("handshake without credentials", err)
	}

	// Right password: calls work.
	ann, err := dial(t, addr, client.WithBasicAuth("ann", "ann-pw"))
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	ctx := context.Background()
	if err := ann.CreateDatabase(ctx, "db1", false); err != nil {
		t.Fatalf("create database as ann: %v", err)
	}
	if dbs, err := ann.ListDatabases(ctx); err != nil || !contains(dbs, "db1") {
		t.Fatalf("list databases as ann: %v %v", dbs, err)
	}

	// A token from a replica with the same secret works here.
	replica, _ := auth.New(mustUsers(t, secret), auth.Options{})
	fromReplica, _ := dial(t, addr, client.WithBearerToken(replica.Issue(auth.Principal{Name: "ann"})))
	if err := listTables(fromReplica); err != nil {
		t.Errorf("token from a replica: %v", err)
	}

	// The static API token works (and sees db1 once granted: acl_test.go).
	if err := ann.Action(ctx, "grant", map[string]any{"principal": "svc-etl", "database": "db1", "operations": []string{"describe"}}, nil); err != nil {
		t.Fatal(err)
	}
	svc, _ := dial(t, addr, client.WithBearerToken("svc-token"))
	if dbs, err := svc.ListDatabases(ctx); err != nil || !contains(dbs, "db1") {
		t.Errorf("static token: %v %v", dbs, err)
	}
	// ... but not as a password.
	_, err = dial(t, addr, client.WithBasicAuth("svc-etl", "svc-token"))
	wantUnauthenticated("static token as a password", err)
}

// TestTokenTTL: a token from Handshake stops working after --token-ttl.
func TestTokenTTL(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	srv := startAuthServerAt(t, now, "--users", writeUsers(t, ""), "--token-ttl", "1s")
	ann, err := dial(t, srv.FlightAddr(), client.WithBasicAuth("ann", "ann-pw"))
	if err != nil {
		t.Fatal(err)
	}
	if err := listTables(ann); err != nil {
		t.Fatalf("within the TTL: %v", err)
	}
	clock.Add(int64(1100 * time.Millisecond))
	if err := listTables(ann); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("after the TTL: %v, want UNAUTHENTICATED", err)
	}
	// A new handshake gives a new token.
	if ann, err = dial(t, srv.FlightAddr(), client.WithBasicAuth("ann", "ann-pw")); err != nil {
		t.Fatal(err)
	}
	if err := listTables(ann); err != nil {
		t.Fatalf("with the new token: %v", err)
	}
}

// TestNoAuthNoChange: without --users every call works without credentials,
// and a basic-auth client still connects (Handshake accepts anyone).
func TestNoAuthNoChange(t *testing.T) {
	srv := startAuthServer(t)
	c, _ := dial(t, srv.FlightAddr())
	if err := listTables(c); err != nil {
		t.Fatal(err)
	}
}

func mustUsers(t *testing.T, secret string) *auth.Users {
	t.Helper()
	u, err := auth.LoadUsers(writeUsers(t, secret))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestServeFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"cert without key":      {"--tls-cert", "x.pem"},
		"client CA without TLS": {"--tls-client-ca", "ca.pem"},
		"missing users file":    {"--users", filepath.Join(dir, "none.json")},
		"tiny ttl":              {"--users", writeUsers(t, ""), "--token-ttl", "10ms"},
		"missing cert file":     {"--tls-cert", filepath.Join(dir, "c.pem"), "--tls-key", filepath.Join(dir, "k.pem")},
	} {
		cfg, err := parseServeFlags(append([]string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--http", ""}, args...))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if srv, err := server.Start(t.Context(), &cfg.Config, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
			srv.Stop()
			t.Errorf("%s: started", name)
		}
	}
}

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, all written as PEM files.
type testPKI struct {
	caPool                *x509.CertPool
	caFile                string
	serverCert, serverKey string
	clientCert            tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fluxgate test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p := &testPKI{caPool: x509.NewCertPool(), caFile: filepath.Join(dir, "ca.pem")}
	p.caPool.AddCert(caCert)
	writePEM(t, p.caFile, "CERTIFICATE", caDER)

	leaf := func(serial int64, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: "fluxgate test"},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
			DNSNames:     []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	der, key := leaf(2, x509.ExtKeyUsageServerAuth)
	p.serverCert, p.serverKey = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	writePEM(t, p.serverCert, "CERTIFICATE", der)
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	writePEM(t, p.serverKey, "PRIVATE KEY", keyDER)

	der, key = leaf(3, x509.ExtKeyUsageClientAuth)
	p.clientCert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return p
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTLS(t *testing.T) {
	right, wrong := newTestPKI(t), newTestPKI(t)
	srv := startAuthServer(t, "--tls-cert", right.serverCert, "--tls-key", right.serverKey, "--users", writeUsers(t, ""))
	addr := "grpc+tls://" + srv.FlightAddr()

	// The right CA: the handshake and calls work over TLS.
	c, err := dial(t, addr, client.WithTLS(&tls.Config{RootCAs: right.caPool}), client.WithBasicAuth("ann", "ann-pw"))
	if err != nil {
		t.Fatalf("right CA: %v", err)
	}
	if err := listTables(c); err != nil {
		t.Fatalf("right CA: %v", err)
	}
	// The wrong CA fails: on the handshake, or on the first call.
	c, err = dial(t, addr, client.WithTLS(&tls.Config{RootCAs: wrong.caPool}))
	if err == nil {
		err = listTables(c)
	}
	if err == nil || status.Code(err) == codes.Unauthenticated || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("wrong CA: %v, want a certificate error", err)
	}
	// Plain gRPC to a TLS port fails.
	c, _ = dial(t, "grpc://"+srv.FlightAddr(), client.WithBearerToken("svc-token"))
	if err := listTables(c); err == nil {
		t.Error("plaintext client to a TLS server: no error")
	}
}

func TestMutualTLS(t *testing.T) {
	right, wrong := newTestPKI(t), newTestPKI(t)
	srv := startAuthServer(t, "--tls-cert", right.serverCert, "--tls-key", right.serverKey, "--tls-client-ca", right.caFile)
	addr := "grpc+tls://" + srv.FlightAddr()

	c, _ := dial(t, addr, client.WithTLS(&tls.Config{RootCAs: right.caPool, Certificates: []tls.Certificate{right.clientCert}}))
	if err := listTables(c); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	c, _ = dial(t, addr, client.WithTLS(&tls.Config{RootCAs: right.caPool}))
	if err := listTables(c); err == nil {
		t.Error("without a client certificate: no error")
	}
	c, _ = dial(t, addr, client.WithTLS(&tls.Config{RootCAs: right.caPool, Certificates: []tls.Certificate{wrong.clientCert}}))
	if err := listTables(c); err == nil {
		t.Error("with a client certificate of another CA: no error")
	}
}

func TestAuthVerb(t *testing.T) {
	run := func(in string, args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := authMain(args, stdio{in: strings.NewReader(in), out: &out, err: &errb})
		return out.String(), err
	}
	h, err := run("s3cret\n", "hash-password")
	if err != nil || bcrypt.CompareHashAndPassword([]byte(strings.TrimSpace(h)), []byte("s3cret")) != nil {
		t.Fatalf("hash-password: %q %v", h, err)
	}
	if h, err := run("abc", "hash-token"); err != nil || strings.TrimSpace(h) != auth.HashToken("abc") {
		t.Fatalf("hash-token: %q %v", h, err)
	}
	if _, err := run("", "hash-password"); err == nil {
		t.Error("hash-password of nothing: no error")
	}
	if s, err := run("", "new-secret"); err != nil || len(strings.TrimSpace(s)) != 44 {
		t.Errorf("new-secret: %q %v", s, err)
	}
	if _, err := run("", "nope"); err == nil {
		t.Error("unknown command: no error")
	}
}
