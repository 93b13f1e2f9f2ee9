package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/auth"
)

// testHTTPLimits are short, so that the tests see them act.
var testHTTPLimits = httpLimits{readHeader: time.Second, read: time.Second, idle: 100 * time.Millisecond, writeStall: 500 * time.Millisecond}

// serveHTTP serves h as the server does, with limits and at most conns
// connections, on a loopback port, until the test ends.
func serveHTTP(t *testing.T, h http.Handler, limits httpLimits, conns int) (string, *http.Server) {
	t.Helper()
	srv := newHTTPServer(&http.Server{Handler: h}, limits)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(limitConnections(ln, conns))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), srv
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })

// get sends one kept-alive request on conn and reads its answer.
func get(t *testing.T, conn net.Conn, r *bufio.Reader) {
	t.Helper()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: fluxgate\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// A kept-alive connection that sends nothing more is closed after the idle
// time (issue 28: 3,000 such connections to /healthz stayed open).
func TestHTTPIdleConnectionsAreClosed(t *testing.T) {
	addr, _ := serveHTTP(t, ok, testHTTPLimits, 10)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	get(t, conn, r)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("an idle kept-alive connection: %v, want closed (EOF) within 10s", err)
	}
}

// Past the connection limit a connection waits to be accepted until one of
// the others closes.
func TestHTTPConnectionLimit(t *testing.T) {
	limits := testHTTPLimits
	limits.idle = time.Minute // the two stay open until the test closes one
	addr, _ := serveHTTP(t, ok, limits, 2)
	var held []net.Conn
	for range 2 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		get(t, conn, bufio.NewReader(conn))
		held = append(held, conn)
	}
	third, err := net.Dial("tcp", addr) // the kernel's backlog takes it
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	r := bufio.NewReader(third)
	if _, err := io.WriteString(third, "GET /healthz HTTP/1.1\r\nHost: fluxgate\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := r.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a third connection past a limit of 2: %v, want no answer while two are open", err)
	}
	held[0].Close()
	third.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("the third connection once one closed: %v", err)
	}
	resp.Body.Close()
}

// A response goes on as long as its client reads, however long that takes in
// all; one whose client stops reading is cut off after the stall time.
func TestHTTPResponsesMayTakeLongButNotStall(t *testing.T) {
	const size = 32 << 20
	writeErr := make(chan error, 2)
	big := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		piece := make([]byte, 1<<20)
		for written := 0; written < size; written += len(piece) {
			if _, err := w.Write(piece); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	})
	addr, _ := serveHTTP(t, big, testHTTPLimits, 10)

	// A slow reader: well past the stall time in all, never stalling.
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	start, n := time.Now(), 0
	buf := make([]byte, 1<<20)
	for {
		m, err := io.ReadFull(resp.Body, buf)
		n += m
		if err != nil {
			break
		}
		time.Sleep(testHTTPLimits.writeStall / 10)
	}
	resp.Body.Close()
	if err := <-writeErr; err != nil || n != size {
		t.Fatalf("a slow reader got %d of %d bytes in %s; the handler: %v", n, size, time.Since(start), err)
	}
	if took := time.Since(start); took < 2*testHTTPLimits.writeStall {
		t.Fatalf("the slow reader took %s, not past the stall time %s: the test proves nothing", took, testHTTPLimits.writeStall)
	}

	// A reader that stops.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: fluxgate\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-writeErr:
		if err == nil {
			t.Fatal("a response to a client that reads nothing was written whole")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a response to a client that reads nothing still writes after 10s")
	}
}

// With users, /metrics (it names every table) answers only admins and
// principals with "metrics": true; others are told why, and a throttled
// address when to retry.
func TestMetricsNeedCredentials(t *testing.T) {
	pw, err := auth.HashPassword("ann-pw")
	if err != nil {
		t.Fatal(err)
	}
	users, err := auth.ParseUsers(fmt.Appendf(nil, `{"users": [{"name": "ann", "password_bcrypt": %q}], "tokens": [
		{"name": "etl", "token_sha256": %q},
		{"name": "prometheus", "token_sha256": %q, "metrics": true},
		{"name": "root", "token_sha256": %q, "admin": true}]}`,
		pw, auth.HashToken("etl-token"), auth.HashToken("scrape-token"), auth.HashToken("root-token")))
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{}, 1)
	after := func(time.Duration) <-chan time.Time { // a handshake waits, for a refill that never comes
		waiting <- struct{}{}
		return nil
	}
	now := time.Now() // a clock that does not move: nothing refills
	authn, err := auth.New(users, auth.Options{Now: func() time.Time { return now }, After: after,
		Throttle: auth.ThrottleOptions{Burst: 1, Refill: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	route := metricsRoute(authn, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `fluxgate_table_rows{table="fluss.secret"} 1`)
	}))
	do := func(ctx context.Context, authz string) *httptest.ResponseRecorder {
		r := httptest.NewRequestWithContext(ctx, "GET", "/metrics", nil)
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		w := httptest.NewRecorder()
		route.Handler.ServeHTTP(w, r)
		return w
	}
	ctx := context.Background()
	for _, c := range []struct {
		authz string
		code  int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer nope", http.StatusUnauthorized},
		{"Bearer etl-token", http.StatusForbidden},
		{"Bearer scrape-token", http.StatusOK},
		{"Bearer root-token", http.StatusOK},
	} {
		w := do(ctx, c.authz)
		if w.Code != c.code {
			t.Errorf("%q: %d %s, want %d", c.authz, w.Code, w.Body, c.code)
		}
		if got := strings.Contains(w.Body.String(), "fluss.secret"); got != (c.code == http.StatusOK) {
			t.Errorf("%q: table names served: %v", c.authz, got)
		}
		if c.code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%q: 401 without WWW-Authenticate", c.authz)
		}
	}
	// One wrong password spends the burst; the next waits for the refill,
	// and the one after is refused with Retry-After.
	basic := func(pw string) string { return "Basic " + basicAuth("ann", pw) }
	if w := do(ctx, basic("wrong")); w.Code != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %d, want 401", w.Code)
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { do(wctx, basic("ann-pw")) })
	<-waiting
	w := do(ctx, basic("wrong"))
	cancel()
	wg.Wait()
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "3600" {
		t.Fatalf("throttled: %d, Retry-After %q; want 429, 3600", w.Code, w.Header().Get("Retry-After"))
	}
}

func basicAuth(user, pw string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pw)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

// A server with users serves /metrics behind credentials, and one without
// users to anyone, as before.
func TestServerGuardsMetricsWithUsers(t *testing.T) {
	dir := t.TempDir()
	usersFile := filepath.Join(dir, "users.json")
	if err := os.WriteFile(usersFile, fmt.Appendf(nil, `{"tokens": [{"name": "prometheus", "token_sha256": %q, "metrics": true}]}`, auth.HashToken("scrape")), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	for _, users := range []string{"", usersFile} {
		srv, err := Start(t.Context(), &Config{Data: t.TempDir(), Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0", Users: users}, log)
		if err != nil {
			t.Fatal(err)
		}
		code := func(authz string) int {
			r, _ := http.NewRequest("GET", "http://"+srv.HTTPAddr()+"/metrics", nil)
			if authz != "" {
				r.Header.Set("Authorization", authz)
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		want := map[bool]int{true: http.StatusUnauthorized, false: http.StatusOK}[users != ""]
		if got := code(""); got != want {
			t.Errorf("users %q: /metrics without credentials: %d, want %d", users, got, want)
		}
		if got := code("Bearer scrape"); users != "" && got != http.StatusOK {
			t.Errorf("/metrics with the scraper's token: %d, want 200", got)
		}
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}
