package conformance_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/conformance"
	"github.com/fluxgate-io/fluxgate/internal/syncbuf"
)

// testMaxMessageBytes is the --max-message-bytes of the test server: small,
// so that err-message-too-large sends only a few MiB.
const testMaxMessageBytes = 8 << 20

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestScenarios runs every scenario against a server process that it can
// restart.
func TestScenarios(t *testing.T) {
	// Small segments and frequent retention, so that lake-union-read-after-ttl
	// sees tiered segments expire.
	httpAddr := freeAddr(t)
	srv := startServer(t, "--max-message-bytes", strconv.Itoa(testMaxMessageBytes),
		"--segment-bytes", "65536", "--retention-interval", "200ms", "--http", httpAddr)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	env := newEnv(t, srv, mem)
	env.RetentionInterval = 200 * time.Millisecond
	env.MetricsURL = "http://" + httpAddr + "/metrics"
	env.Restart = func(ctx context.Context) error {
		if err := srv.restart(); err != nil {
			return err
		}
		return redial(ctx, env, srv, mem)
	}
	ctx := testContext(t, 3*time.Minute)
	if err := env.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	for _, sc := range conformance.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			before := mem.CurrentAlloc()
			err := conformance.RunScenario(ctx, env, sc)
			if leaked := mem.CurrentAlloc() - before; leaked != 0 {
				t.Errorf("%d bytes of Arrow memory not released", leaked)
			}
			// This Env can restart the server and has a short retention
			// interval: every scenario runs, so a skip is a failure.
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRunReport checks Run's report, and that scenarios needing a restart
// are skipped, not passed, when the server cannot be restarted.
func TestRunReport(t *testing.T) {
	srv := startServer(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	env := newEnv(t, srv, mem)
	var out bytes.Buffer
	passed, failed, skipped := conformance.Run(testContext(t, time.Minute), env, "^(projection|restart)$", &out)
	t.Logf("report:\n%s", &out)
	if passed != 1 || failed != 0 || skipped != 1 {
		t.Fatalf("Run returned %d passed, %d failed, %d skipped; want 1, 0, 1", passed, failed, skipped)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "PASS projection (") ||
		lines[1] != "SKIP restart: needs restart" || lines[2] != "1 passed, 0 failed, 1 skipped" {
		t.Fatalf("report:\n%s\nwant PASS projection (...), SKIP restart: needs restart, 1 passed, 0 failed, 1 skipped", &out)
	}
	tables, err := env.Client.ListTables(testContext(t, 10*time.Second), env.Database)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if strings.HasPrefix(tb.Table, env.Table("")) {
			t.Errorf("table %s of a passing run was not dropped", tb.Table)
		}
	}
}

func newEnv(t *testing.T, srv *server, mem *memory.CheckedAllocator) *conformance.Env {
	t.Helper()
	c, err := client.Dial(context.Background(), srv.addr, client.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	env := conformance.NewEnv(c, srv.addr)
	env.MaxMessageBytes = testMaxMessageBytes
	t.Cleanup(func() {
		env.Client.Close()
		mem.AssertSize(t, 0)
	})
	return env
}

// redial replaces env.Client with a connection to the restarted server: the
// old one may be in gRPC's reconnect backoff.
func redial(ctx context.Context, env *conformance.Env, srv *server, mem memory.Allocator) error {
	c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
	if err != nil {
		return err
	}
	env.Client.Close()
	env.Client = c
	return nil
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// fluxgateBinary returns $FLUXGATE_BIN when set (make test builds the binary
// once for every suite), else builds cmd/fluxgate once per test run.
func fluxgateBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		gomod := strings.TrimSpace(string(out))
		if err != nil || gomod == "" || gomod == os.DevNull {
			buildErr = fmt.Errorf("go env GOMOD: %q, %v", gomod, err)
			return
		}
		if bin := os.Getenv("FLUXGATE_BIN"); bin != "" {
			// A relative path is relative to the repository, not to this package.
			binPath = bin
			if !filepath.IsAbs(bin) {
				binPath = filepath.Join(filepath.Dir(gomod), bin)
			}
			return
		}
		if binDir, err = os.MkdirTemp("", "fluxgate-conformance-"); err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(binDir, "fluxgate")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/fluxgate")
		cmd.Dir = filepath.Dir(gomod)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/fluxgate: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// server is a fluxgate process on a data directory and loopback port that
// outlive its restarts.
type server struct {
	bin, dir, addr string
	args           []string
	env            []string        // added to the process's environment
	maxFiles       int             // RLIMIT_NOFILE of the process, if not 0
	log            *syncbuf.Buffer // stdout and stderr of every run

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	waitErr error         // how it exited; read after exited is closed
}

// startServer starts the fluxgate binary with args on a fresh data directory
// and stops it when the test ends; with -short the test is skipped instead.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	return startServerMaxFiles(t, 0, args...)
}

// startServerMaxFiles is startServer with the process's RLIMIT_NOFILE set to
// maxFiles (0: inherited).
func startServerMaxFiles(t *testing.T, maxFiles int, args ...string) *server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the fluxgate binary")
	}
	s := &server{bin: fluxgateBinary(t), dir: t.TempDir(), addr: freeAddr(t), args: args, log: &syncbuf.Buffer{}, maxFiles: maxFiles}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("stop the server: %v", err)
		}
		if t.Failed() {
			t.Logf("server output:\n%s", s.log)
		}
	})
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs the server and waits until it accepts connections: it listens
// only once its data directory is recovered.
func (s *server) start() error {
	fmt.Fprintf(s.log, "--- start %s\n", time.Now().Format(time.RFC3339Nano))
	args := append([]string{"serve", "--data", s.dir, "--listen", s.addr, "--http", ""}, s.args...)
	cmd := exec.Command(s.bin, args...)
	if s.maxFiles > 0 {
		// The shell lowers both limits, so Go's runtime cannot raise the
		// soft one again, then becomes the server.
		cmd = exec.Command("/bin/sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, s.maxFiles), s.bin}, args...)...)
	}
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-s.exited:
			s.cmd = nil
			return fmt.Errorf("the server exited while starting: %v", s.waitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("the server did not accept connections on %s within 20 s", s.addr)
		}
	}
}

// stop ends the server gracefully (SIGTERM), or kills it after 30 s.
func (s *server) stop() error {
	if s.cmd == nil {
		return nil
	}
	fmt.Fprintf(s.log, "--- SIGTERM %s\n", time.Now().Format(time.RFC3339Nano))
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return s.kill()
	}
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.kill()
		return fmt.Errorf("the server did not stop within 30 s of SIGTERM")
	}
	s.cmd = nil
	if s.waitErr != nil {
		return fmt.Errorf("the server exited with %v after SIGTERM", s.waitErr)
	}
	return nil
}

// kill ends the server at once (SIGKILL), as a crash would.
func (s *server) kill() error {
	if s.cmd == nil {
		return nil
	}
	fmt.Fprintf(s.log, "--- SIGKILL %s\n", time.Now().Format(time.RFC3339Nano))
	err := s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
	return err
}

func (s *server) restart() error {
	if err := s.stop(); err != nil {
		return err
	}
	return s.start()
}
