package engine

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fluxgate-io/fluxgate/engine/internal/datadir"
)

// TestDataDirInUse checks that a data directory open in another process, or
// in this one, is refused with a sentence that names the lock file, and can
// be opened once it is closed.
func TestDataDirInUse(t *testing.T) {
	if dir := os.Getenv("FLUXGATE_TEST_HOLD_DIR"); dir != "" {
		holdDataDir(t, dir)
		return
	}
	dir := t.TempDir()
	want := "data directory " + dir + " is in use by another fluxgate process (lock file " + filepath.Join(dir, datadir.LockFile) + ")"

	// Another process holds it until its stdin closes.
	cmd := exec.Command(os.Args[0], "-test.run=^TestDataDirInUse$")
	cmd.Env = append(os.Environ(), "FLUXGATE_TEST_HOLD_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "open\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("holder process said %q, %v", line, err)
	}
	if e, err := Open(t.Context(), dir, Options{}); err == nil || err.Error() != want {
		if e != nil {
			e.Close()
		}
		t.Errorf("Open of a directory another process has open: %v, want %q", err, want)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("holder process: %v", err)
	}

	// This process holds it.
	e, err := Open(t.Context(), dir, Options{})
	if err != nil {
		t.Fatalf("Open after the other process closed it: %v", err)
	}
	if e2, err := Open(t.Context(), dir, Options{}); err == nil || err.Error() != want {
		if e2 != nil {
			e2.Close()
		}
		t.Errorf("second Open in this process: %v, want %q", err, want)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(t.Context(), dir, Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// holdDataDir is the other process of TestDataDirInUse: it opens dir, says
// "open" and closes it when its stdin ends.
func holdDataDir(t *testing.T, dir string) {
	e, err := Open(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("open\n")
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		t.Error(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}
