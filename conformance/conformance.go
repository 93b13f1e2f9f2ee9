// Package conformance holds black-box scenarios that check a live fluxgate
// server against PROTOCOL.md. They reach the server only through the Go
// client (package client) and plain Flight calls, never through the server's
// own packages, so they run the same against a test process, a staging
// deployment, or any other implementation of the protocol.
//
// Every scenario creates its own tables under a per-run prefix, so a shared
// server can be checked again and again. Scenarios that must restart the
// server (Env.Restart) report SKIP when the caller cannot restart it.
package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
)

// Scenario is one checked behaviour of the protocol.
type Scenario struct {
	Name string
	// Run returns nil when the server behaved, an error saying what it did
	// instead, or an error made by Skip when the Env cannot run it.
	Run func(ctx context.Context, env *Env) error
}

// Env is the server under test and what scenarios need to drive it.
type Env struct {
	// Client is connected to the server. Restart may replace it.
	Client *client.Client
	// Addr is the server's Flight address.
	Addr string
	// Database holds the tables of every run; Prefix starts the names of this
	// run's tables.
	Database string
	Prefix   string
	// Mem allocates the records scenarios build.
	Mem memory.Allocator
	// MaxMessageBytes is the server's --max-message-bytes.
	MaxMessageBytes int
	// ScenarioTimeout bounds each scenario.
	ScenarioTimeout time.Duration
	// Restart stops the server and starts it again on the same data
	// directory, replacing Client; nil when the server cannot be restarted.
	Restart func(ctx context.Context) error
	// RetentionInterval is the server's --retention-interval, 0 when not
	// known. Scenarios that wait for log retention need it at most
	// maxRetentionInterval.
	RetentionInterval time.Duration
	// MetricsURL is the server's Prometheus endpoint (http://host:port/metrics),
	// "" when not known. Scenarios that count what the server read need it.
	MetricsURL string
}

// NewEnv returns an Env for the server c is connected to, with a fresh table
// prefix and the protocol's defaults.
func NewEnv(c *client.Client, addr string) *Env {
	return &Env{
		Client:          c,
		Addr:            addr,
		Database:        "conformance",
		Prefix:          "r" + randomHex(4) + "_",
		Mem:             c.Allocator(),
		MaxMessageBytes: client.MaxMessageBytes,
		ScenarioTimeout: 60 * time.Second,
	}
}

// Table returns the full name of this run's table called name.
func (e *Env) Table(name string) string { return e.Database + "." + e.Prefix + name }

// Setup creates the Env's database if it does not exist yet.
func (e *Env) Setup(ctx context.Context) error {
	return e.Client.CreateDatabase(ctx, e.Database, true)
}

// DropTables drops the tables this run created.
func (e *Env) DropTables(ctx context.Context) error {
	tables, err := e.Client.ListTables(ctx, e.Database)
	if err != nil {
		return err
	}
	prefix := e.Table("")
	var errs []error
	for _, t := range tables {
		if strings.HasPrefix(t.Table, prefix) {
			errs = append(errs, e.Client.DropTable(ctx, t.Table, true))
		}
	}
	return errors.Join(errs...)
}

// Scenarios returns every scenario, in the order Run runs them.
func Scenarios() []Scenario {
	return []Scenario{
		{"types-roundtrip", typesRoundtrip},
		{"projection", projectionOrder},
		{"changelog-columns", changelogColumns},
		{"scan-compression", scanCompression},
		{"startup-modes", startupModes},
		{"stop-offsets", stopOffsets},
		{"limit", limitScan},
		{"buckets-subset", bucketsSubset},
		{"list-offsets", listOffsets},
		{"follow", follow},
		{"restart", restartKeepsEverything},
		{"idempotent-retry", idempotentRetry},
		{"idempotent-retry-restart", idempotentRetryRestart},
		{"err-not-found", errNotFound},
		{"err-malformed-request", errMalformedRequest},
		{"err-unknown-option", errUnknownOption},
		{"err-bad-batch", errBadBatch},
		{"err-message-too-large", errMessageTooLarge},
		{"err-forged-ticket", errForgedTicket},
		{"err-offset-out-of-range", errOffsetOutOfRange},
		{"err-dropped-during-scan", errDroppedDuringScan},
		{"err-write-to-view", errWriteToView},
		{"pk-partial-update-join", pkPartialUpdateJoin},
		{"pk-aggregation-exactly-once", pkAggregationExactlyOnce},
		{"pk-merge-engines", pkMergeEngines},
		{"pk-auto-increment", pkAutoIncrement},
		{"pk-auto-increment-restart", pkAutoIncrementRestart},
		{"pk-metamorphic", pkMetamorphic},
		{"pk-metamorphic-restart", pkMetamorphicRestart},
		{"pk-bad-input", pkBadInput},
		{"lookup-point-and-prefix", lookupPointAndPrefix},
		{"lookup-global-dictionary", lookupGlobalDictionary},
		{"lookup-delta-join", lookupDeltaJoin},
		{"lookup-concurrency", lookupConcurrency},
		{"lookup-concurrency-restart", lookupConcurrencyRestart},
		{"lookup-bad-input", lookupBadInput},
		{"lake-union-read", lakeUnionRead},
		{"lake-union-read-after-ttl", lakeUnionReadAfterTTL},
		{"partition-pruning", partitionPruning},
		{"partition-follow-discovery", partitionFollowDiscovery},
		{"partition-restart", partitionRestart},
		{"partition-pk", partitionPK},
		{"partition-bad-input", partitionBadInput},
		{"partition-auto-retention", partitionAutoRetention},
	}
}

// Run runs the scenarios whose name matches the regular expression filter
// (all for ""), printing "PASS name (duration)", "FAIL name: reason" or
// "SKIP name: reason" for each and a summary line. When all pass it drops the
// run's tables; after a failure they stay for inspection.
func Run(ctx context.Context, env *Env, filter string, out io.Writer) (passed, failed, skipped int) {
	re, err := regexp.Compile(filter)
	if err != nil {
		fmt.Fprintf(out, "FAIL filter: %v\n0 passed, 1 failed\n", err)
		return 0, 1, 0
	}
	if err := env.Setup(ctx); err != nil {
		fmt.Fprintf(out, "FAIL setup: %v\n0 passed, 1 failed\n", err)
		return 0, 1, 0
	}
	for _, sc := range Scenarios() {
		if !re.MatchString(sc.Name) {
			continue
		}
		switch d, err := runOne(ctx, env, sc); {
		case err == nil:
			passed++
			fmt.Fprintf(out, "PASS %s (%s)\n", sc.Name, d.Round(time.Millisecond))
		case IsSkip(err):
			skipped++
			fmt.Fprintf(out, "SKIP %s: %s\n", sc.Name, skipReason(err))
		default:
			failed++
			fmt.Fprintf(out, "FAIL %s: %v\n", sc.Name, err)
		}
	}
	summary := fmt.Sprintf("%d passed, %d failed", passed, failed)
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", skipped)
	}
	fmt.Fprintln(out, summary)
	if failed == 0 {
		if err := env.DropTables(ctx); err != nil {
			fmt.Fprintf(out, "cleanup: %v\n", err)
		}
	} else {
		fmt.Fprintf(out, "the tables of this run are kept for inspection: %s*\n", env.Table(""))
	}
	return passed, failed, skipped
}

// RunScenario runs one scenario with the Env's timeout and returns its
// outcome: nil, a Skip error, or the failure.
func RunScenario(ctx context.Context, env *Env, sc Scenario) error {
	_, err := runOne(ctx, env, sc)
	return err
}

// Skip returns the error a scenario returns when it cannot run in this Env.
func Skip(reason string) error { return &skipError{reason} }

// IsSkip reports whether err is a Skip.
func IsSkip(err error) bool {
	var s *skipError
	return errors.As(err, &s)
}

type skipError struct{ reason string }

func (e *skipError) Error() string { return "skipped: " + e.reason }

func skipReason(err error) string {
	var s *skipError
	errors.As(err, &s)
	return s.reason
}

// needsRestart is the Skip of scenarios that restart the server.
func (e *Env) needsRestart() error {
	if e.Restart == nil {
		return Skip("needs restart")
	}
	return nil
}

// maxRetentionInterval is the longest retention interval for which a
// scenario waits for retention to remove segments.
const maxRetentionInterval = time.Second

// needsRetention is the Skip of scenarios that wait for log retention.
func (e *Env) needsRetention() error {
	if e.RetentionInterval <= 0 || e.RetentionInterval > maxRetentionInterval {
		return Skip(fmt.Sprintf("needs a server whose --retention-interval is known and at most %s", maxRetentionInterval))
	}
	return nil
}

// needsMetrics is the Skip of scenarios that read the server's metrics.
func (e *Env) needsMetrics() error {
	if e.MetricsURL == "" {
		return Skip("needs the server's metrics endpoint")
	}
	return nil
}

func runOne(ctx context.Context, env *Env, sc Scenario) (time.Duration, error) {
	timeout := env.ScenarioTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err := sc.Run(sctx, env)
	return time.Since(start), err
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}
