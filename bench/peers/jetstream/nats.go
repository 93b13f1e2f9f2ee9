package main

// The JetStream side: an embedded nats-server with JetStream's file store,
// reached over loopback TCP with nats.go. A batch is one message, its Arrow
// IPC stream (schema and batch, uncompressed: what a user would publish), on
// one of --partitions subjects.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fluxgate-io/fluxgate/bench/benchdata"
)

// jsPending is how many publishes may await their acknowledgement; a
// publish beyond it waits up to stallWait for one.
const (
	jsPending = 64
	stallWait = time.Minute
)

type jetStreamSide struct {
	cfg  *config
	data *benchdata.Narrow
	// The append and read stream lives on a server that syncs every write
	// (SyncAlways), as fluxgate fsyncs before it acknowledges. The KV bucket
	// lives on one with the default sync: its load is untimed and would take
	// an fsync per key, and a get does not depend on it.
	durable, kvSrv *server.Server
	nc, kvNC       *nats.Conn
	js             jetstream.JetStream
	kv             jetstream.KeyValue
	stream         string // the last appended stream
	dir            string
	getKeys        [][]string // per run, the keys of the gets
}

func startJetStream(ctx context.Context, tmp string, cfg *config, data *benchdata.Narrow) (*jetStreamSide, error) {
	s := &jetStreamSide{cfg: cfg, data: data, dir: filepath.Join(tmp, "jetstream")}
	var err error
	if s.durable, s.nc, err = startNATS(filepath.Join(s.dir, "durable"), true); err != nil {
		return nil, err
	}
	if s.kvSrv, s.kvNC, err = startNATS(filepath.Join(s.dir, "kv"), false); err != nil {
		s.close()
		return nil, err
	}
	if s.js, err = jetstream.New(s.nc, jetstream.WithPublishAsyncMaxPending(jsPending)); err != nil {
		s.close()
		return nil, err
	}
	if err := s.loadKV(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func startNATS(dir string, syncAlways bool) (*server.Server, *nats.Conn, error) {
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: dir, SyncAlways: syncAlways,
		MaxPayload: 8 << 20, // a batch is a message
	})
	if err != nil {
		return nil, nil, err
	}
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, nil, errors.New("nats-server did not start")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		srv.Shutdown()
		return nil, nil, err
	}
	return srv, nc, nil
}

func (s *jetStreamSide) close() {
	for _, nc := range []*nats.Conn{s.nc, s.kvNC} {
		if nc != nil {
			nc.Close()
		}
	}
	for _, srv := range []*server.Server{s.durable, s.kvSrv} {
		if srv != nil {
			srv.Shutdown()
			srv.WaitForShutdown()
		}
	}
}

// append publishes the batches to a new stream, --partitions subjects round
// robin, and waits for every acknowledgement. The stream before is deleted
// first (untimed).
func (s *jetStreamSide) append(ctx context.Context, rep int) (sample, error) {
	if s.stream != "" {
		if err := s.js.DeleteStream(ctx, s.stream); err != nil {
			return sample{}, err
		}
	}
	s.stream = fmt.Sprintf("EVENTS_%d", rep)
	if _, err := s.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: s.stream, Subjects: []string{s.stream + ".*"}, Storage: jetstream.FileStorage,
	}); err != nil {
		return sample{}, err
	}
	start := time.Now()
	var buf bytes.Buffer
	var acks []jetstream.PubAckFuture
	for i, rec := range s.data.Recs {
		buf.Reset()
		w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
		if err := w.Write(rec); err != nil {
			return sample{}, err
		}
		if err := w.Close(); err != nil {
			return sample{}, err
		}
		// PublishAsync keeps the message, to resend it, until it is acknowledged.
		subject := fmt.Sprintf("%s.%d", s.stream, i%s.cfg.partitions)
		ack, err := s.js.PublishAsync(subject, bytes.Clone(buf.Bytes()), jetstream.WithStallWait(stallWait))
		if err != nil {
			return sample{}, err
		}
		acks = append(acks, ack)
	}
	select {
	case <-s.js.PublishAsyncComplete():
	case <-ctx.Done():
		return sample{}, ctx.Err()
	}
	for _, a := range acks {
		select {
		case <-a.Ok():
		case err := <-a.Err():
			return sample{}, err
		}
	}
	return sample{n: s.data.Rows, d: time.Since(start)}, nil
}

// readPullBytes bounds the bytes of one pull of the read.
const readPullBytes = 32 << 20

// read consumes the last appended stream from its start with an ordered
// consumer, decoding every batch.
func (s *jetStreamSide) read(ctx context.Context) (sample, error) {
	start := time.Now()
	cons, err := s.js.OrderedConsumer(ctx, s.stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return sample{}, err
	}
	// Pulls bounded in bytes: by message count (500), 650 KB batches
	// would overflow the subscription's pending limit (64 MB), and the
	// consumer would drop and re-request them.
	it, err := cons.Messages(jetstream.PullMaxBytes(readPullBytes))
	if err != nil {
		return sample{}, err
	}
	defer it.Stop()
	var rows int64
	for rows < s.data.Rows {
		msg, err := it.Next()
		if err != nil {
			return sample{}, err
		}
		r, err := ipc.NewReader(bytes.NewReader(msg.Data()))
		if err != nil {
			return sample{}, err
		}
		n, err := countRows(r)
		r.Release()
		if err != nil {
			return sample{}, err
		}
		rows += n
	}
	return fullRead(rows, s.data, start)
}

// loadKV stores keys 0..keys-1 in a KV bucket, publishing asynchronously
// (untimed), and draws each run's keys: every key once, shuffled.
func (s *jetStreamSide) loadKV(ctx context.Context) error {
	js, err := jetstream.New(s.kvNC, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		return err
	}
	if s.kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "kv", Storage: jetstream.FileStorage}); err != nil {
		return err
	}
	for k := range int64(s.cfg.keys) {
		if _, err := js.PublishAsync("$KV.kv."+strconv.FormatInt(k, 10), []byte(benchdata.KeyValue(k)), jetstream.WithStallWait(stallWait)); err != nil {
			return err
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return ctx.Err()
	}
	for rep := range s.cfg.reps {
		keys := make([]string, s.cfg.keys)
		for i, k := range getOrder(s.cfg.keys, rep) {
			keys[i] = strconv.FormatInt(k, 10)
		}
		s.getKeys = append(s.getKeys, keys)
	}
	return nil
}

// kvGetters is how many goroutines get keys: a get is a request and its
// reply, so one goroutine leaves the server idle half the time.
const kvGetters = 2

// gets gets the run's keys, kvGetters goroutines each getting its share one
// by one, and checks every value.
func (s *jetStreamSide) gets(ctx context.Context, rep int) (sample, error) {
	keys := s.getKeys[rep]
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, kvGetters)
	for g := range kvGetters {
		wg.Go(func() {
			for i := g; i < len(keys); i += kvGetters {
				e, err := s.kv.Get(ctx, keys[i])
				if err != nil {
					errs[g] = fmt.Errorf("get %s: %w", keys[i], err)
					return
				}
				k, _ := strconv.ParseInt(keys[i], 10, 64)
				if string(e.Value()) != benchdata.KeyValue(k) {
					errs[g] = fmt.Errorf("get %s: value %q", keys[i], e.Value())
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return sample{}, err
	}
	return sample{n: int64(len(keys)), d: time.Since(start)}, nil
}

func (s *jetStreamSide) stored() (int64, error) {
	return benchdata.DirSize(filepath.Join(s.dir, "durable"))
}

// getOrder is the keys 0..n-1 in the order run rep gets them.
func getOrder(n, rep int) []int64 {
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(i)
	}
	rng := rand.New(rand.NewPCG(uint64(rep), 7))
	rng.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}
