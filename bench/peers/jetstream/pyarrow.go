package main

// The pyarrow side (--pyarrow): the same fluxgate server reached with
// pyarrow's Flight client, through python/bench/peer_pyarrow.py, which the
// peer runs once per timed run and which times the run itself (not Python's
// start or its reading of the data file).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

type pyarrowSide struct {
	fg     *fluxgateSide
	python string // the interpreter, with pyarrow
	script string
	data   string // the batches, as an Arrow IPC file
}

// startPyarrow writes the batches to the Arrow IPC file data.
func startPyarrow(data, python, script string, fg *fluxgateSide) (*pyarrowSide, error) {
	p := &pyarrowSide{fg: fg, python: python, script: script, data: data}
	f, err := os.Create(p.data)
	if err != nil {
		return nil, err
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(fg.data.Schema))
	if err == nil {
		for _, rec := range fg.data.Recs {
			if err = w.Write(rec); err != nil {
				break
			}
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", p.data, err)
	}
	return p, nil
}

// append sends the batches to a new table compressed as the table is
// (IpcWriteOptions(compression="zstd") for the default table).
func (p *pyarrowSide) append(ctx context.Context, rep int) (sample, error) {
	if err := p.fg.newTable(ctx, rep); err != nil {
		return sample{}, err
	}
	codec := map[string]string{"zstd": "zstd", "lz4_frame": "lz4", "none": "none"}[p.fg.cfg.codec]
	return p.run(ctx, p.fg.data.Rows, "append", p.fg.addr, p.fg.table, p.data, codec)
}

// read reads the last appended table as stored.
func (p *pyarrowSide) read(ctx context.Context) (sample, error) { return p.readAs(ctx, "") }

// readAs reads the last appended table asking for compression.
func (p *pyarrowSide) readAs(ctx context.Context, compression string) (sample, error) {
	return p.run(ctx, p.fg.data.Rows, "read", p.fg.addr, p.fg.table, compression)
}

func (p *pyarrowSide) gets(context.Context, int) (sample, error) {
	return sample{}, fmt.Errorf("pyarrow: no point-get workload")
}

// run runs the script with args and returns the run it timed, which must
// have been of want rows.
func (p *pyarrowSide) run(ctx context.Context, want int64, args ...string) (sample, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, p.python, append([]string{p.script}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("pyarrow %s: %w: %s", args[0], err, stderr.Bytes())
	}
	var out struct {
		Rows    int64   `json:"rows"`
		Seconds float64 `json:"seconds"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return sample{}, fmt.Errorf("pyarrow %s printed %q: %w", args[0], stdout.Bytes(), err)
	}
	if out.Rows != want {
		return sample{}, fmt.Errorf("pyarrow %s: %d rows, want %d", args[0], out.Rows, want)
	}
	return sample{n: out.Rows, d: time.Duration(out.Seconds * float64(time.Second))}, nil
}
