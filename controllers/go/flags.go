// Command-line flags: parsing, and their resolution into options through
// the shared preset table (presets.go). A bad value or combination is one
// line naming the flag and exit code 2.

package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// Status-write modes (--status-write).
const (
	writeUpdate = "update" // PUT .../status
	writePatch  = "patch"  // merge PATCH .../status, no resourceVersion
	writeApply  = "apply"  // server-side apply PATCH .../status
	writeObject = "object" // one PUT on the main resource carrying annotation + status (status dropped by the server)
)

// maxWorkers bounds --workers (the Rust controller's limit, a u16).
const maxWorkers = 65535

// options is the resolved configuration: preset values with overrides applied.
type options struct {
	Namespace     string
	Preset        string
	Workers       int
	Predicate     bool
	StatusWrite   string
	Annotate      bool
	ConflictRetry bool
	// ConflictReread is "api" (retries re-read through the API reader) or
	// "cache" (every attempt re-reads the cached object, as the write-up did).
	ConflictReread string
	WorkMS         int
	// The anti-pattern settings, from the preset only (no flags).
	Read            string
	ListInReconcile bool
	RequeueAfterMS  int
	StatusIfChanged bool
	Finalizer       bool
	Cache           string

	// Client rate limit (deploy/presets.toml's rule): with ClientQPSSet
	// false the library's own default stays; ClientQPS <= 0 turns the
	// limiter off; ClientQPS > 0 is a token bucket of ClientBurst (the
	// --client-burst flag, ClientBurstSet, or the table's default burst).
	ClientQPS      float64
	ClientQPSSet   bool
	ClientBurst    int
	ClientBurstSet bool

	MetricsBindAddress string
	LogLevel           string
	LogFormat          string
	// WatchList is nil when --watch-list was not given (environment left as is).
	WatchList *bool
	// StripManagedFields drops managedFields before objects enter the
	// cache (cache.TransformStripManagedFields).
	StripManagedFields bool
	// LeaderElect: controller-runtime's leader election on a Lease in
	// Namespace, with the library's durations.
	LeaderElect bool
	// Pprof serves net/http/pprof's CPU profile at /debug/pprof/profile on
	// the metrics address.
	Pprof      bool
	Kubeconfig string
	// Queue is nil when --queue was not given (printed as null: the
	// runtime's own order, client-go's FIFO queue here).
	Queue *string
	// PriorityQueue is nil when --priority-queue was not given (printed as
	// null: the runtime's own default, off in v0.22, on in v0.25).
	PriorityQueue *bool
	// PrintSettings: print settingsJSON and exit, touching no cluster.
	PrintSettings bool
}

// rateLimit is the client rate limit our flags apply: rateLibraryDefault,
// rateUnlimited or rateTokenBucket.
func (o *options) rateLimit() string {
	switch {
	case !o.ClientQPSSet:
		return rateLibraryDefault
	case o.ClientQPS <= 0:
		return rateUnlimited
	default:
		return rateTokenBucket
	}
}

// usageError is a bad flag value or combination: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// errHelp is returned for -h/--help.
var errHelp = errors.New("help requested")

func oneOf(flagName, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return usagef("--%s: invalid value %q (want %s)", flagName, value, strings.Join(allowed, "|"))
}

// rawFlags receives the flag values before validation.
type rawFlags struct {
	namespace, preset, predicate, statusWrite, metricsAddr string
	logLevel, logFormat, conflictReread, kubeconfig, queue string
	workers, workMS, clientBurst                           int
	clientQPS                                              float64
	annotate, watchList, printSettings, priorityQueue      bool
	stripManagedFields                                     bool
	leaderElect, pprof                                     bool
}

func newFlagSet(r *rawFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("widget-controller", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&r.namespace, "namespace", "", "namespace to watch (required); the cache is restricted to it")
	d := presets.Defaults
	fs.StringVar(&r.preset, "preset", d.Preset, "controller variant (deploy/presets.toml): "+presets.names())
	fs.IntVar(&r.workers, "workers", 0, "override: concurrent reconciles (>= 1)")
	fs.StringVar(&r.predicate, "predicate", "", "override: generation|none")
	fs.StringVar(&r.statusWrite, "status-write", "", "override: update|patch|apply|object")
	fs.BoolVar(&r.annotate, "annotate", false, "override: stamp the "+lastSeenAnnotation+" annotation with an object Update (--annotate=false turns it off)")
	fs.IntVar(&r.workMS, "work-ms", d.WorkMS, "simulated work per reconcile, milliseconds (>= 0)")
	fs.Float64Var(&r.clientQPS, "client-qps", 0, "client-side rate limit in requests/s; <= 0 = unlimited; unset = library default; > 0 = token bucket")
	fs.IntVar(&r.clientBurst, "client-burst", 0, fmt.Sprintf("client-side token bucket size (>= 1); needs --client-qps > 0; default %d", d.ClientBurst))
	fs.StringVar(&r.metricsAddr, "metrics-bind-address", d.MetricsBindAddress, "HOST:PORT for /metrics (port 0 = any free port, printed as metrics-address=HOST:PORT); 0 = off")
	fs.StringVar(&r.logLevel, "log-level", d.LogLevel, "debug|info|error")
	fs.StringVar(&r.logFormat, "log-format", d.LogFormat, "console|json")
	fs.BoolVar(&r.watchList, "watch-list", false, "streaming initial list: sets KUBE_FEATURE_WatchListClient in this process (--watch-list=false sets it false)")
	fs.BoolVar(&r.stripManagedFields, "strip-managed-fields", false, "drop managedFields from every object before it enters the cache (cache.TransformStripManagedFields)")
	fs.BoolVar(&r.leaderElect, "leader-elect", false, "take part in controller-runtime's leader election on a Lease in --namespace (lease 15 s, renew deadline 10 s, retry 2 s): only the leader reconciles")
	fs.BoolVar(&r.pprof, "pprof", false, "serve a CPU profile at /debug/pprof/profile?seconds=N on the metrics address (net/http/pprof, as controller-runtime's pprof server does)")
	fs.StringVar(&r.conflictReread, "conflict-reread", "api", "re-read on conflict retry: api (API reader) or cache (cached client, as the write-up)")
	fs.StringVar(&r.queue, "queue", "", "work-queue order: fifo (client-go's work queue, the only one controller-runtime has here and its default; kube is the Rust controller's kube-runtime scheduler)")
	fs.BoolVar(&r.priorityQueue, "priority-queue", false, "controller-runtime's priority queue (controller.Options.UsePriorityQueue; v0.20 and later; unset = the runtime's default: off in v0.22, on in v0.25)")
	fs.StringVar(&r.kubeconfig, "kubeconfig", "", "kubeconfig path (default: KUBECONFIG, in-cluster, ~/.kube/config)")
	fs.BoolVar(&r.printSettings, "print-settings", false, "print the resolved settings as one JSON object and exit (no cluster needed)")
	return fs
}

// usage returns the flag help text.
func usage() string {
	var r rawFlags
	fs := newFlagSet(&r)
	var b bytes.Buffer
	b.WriteString("usage: widget-controller --namespace NS [--preset P] [overrides]\n")
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

// parseFlags parses and validates the command line. Errors are *usageError
// (or errHelp); each names the offending flag.
func parseFlags(args []string) (*options, error) {
	var r rawFlags
	fs := newFlagSet(&r)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		// The flag package spells flags with one dash; use the documented two.
		return nil, &usageError{msg: dashDash(err.Error())}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (flags only)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if strings.TrimSpace(r.namespace) == "" {
		return nil, usagef("--namespace is required")
	}
	p := presets.lookup(r.preset)
	if p == nil {
		return nil, usagef("--preset: unknown preset %q (want %s)", r.preset, presets.names())
	}
	o := &options{
		Namespace:          r.namespace,
		Preset:             r.preset,
		Workers:            p.Workers,
		Predicate:          p.Predicate == "generation",
		StatusWrite:        p.StatusWrite,
		Annotate:           p.Annotate,
		ConflictRetry:      p.ConflictRetry, // from the preset only (no flag)
		Read:               p.Read,
		ListInReconcile:    p.ListInReconcile,
		RequeueAfterMS:     p.RequeueAfterMS,
		StatusIfChanged:    p.StatusIfChanged,
		Finalizer:          p.Finalizer,
		Cache:              p.Cache,
		ConflictReread:     r.conflictReread,
		WorkMS:             r.workMS,
		MetricsBindAddress: r.metricsAddr,
		LogLevel:           r.logLevel,
		LogFormat:          r.logFormat,
		Kubeconfig:         r.kubeconfig,
		PrintSettings:      r.printSettings,
	}
	if set["workers"] {
		if r.workers < 1 || r.workers > maxWorkers {
			return nil, usagef("--workers: must be between 1 and %d, got %d", maxWorkers, r.workers)
		}
		o.Workers = r.workers
	}
	if set["predicate"] {
		if err := oneOf("predicate", r.predicate, "generation", "none"); err != nil {
			return nil, err
		}
		o.Predicate = r.predicate == "generation"
	}
	if set["status-write"] {
		if err := oneOf("status-write", r.statusWrite, writeUpdate, writePatch, writeApply, writeObject); err != nil {
			return nil, err
		}
		o.StatusWrite = r.statusWrite
	}
	if set["annotate"] {
		o.Annotate = r.annotate
	}
	if r.workMS < 0 {
		return nil, usagef("--work-ms: must be >= 0, got %d", r.workMS)
	}
	if set["client-qps"] {
		if math.IsNaN(r.clientQPS) || math.IsInf(r.clientQPS, 0) || r.clientQPS > math.MaxFloat32 {
			return nil, usagef("--client-qps: must be a finite number, got %v", r.clientQPS)
		}
		o.ClientQPS, o.ClientQPSSet = r.clientQPS, true
	}
	if set["client-burst"] {
		if !o.ClientQPSSet || o.ClientQPS <= 0 {
			return nil, usagef("--client-burst: needs --client-qps > 0 (without it no token bucket is configured)")
		}
		if r.clientBurst < 1 || r.clientBurst > math.MaxInt32 {
			return nil, usagef("--client-burst: must be between 1 and %d, got %d", math.MaxInt32, r.clientBurst)
		}
		o.ClientBurst, o.ClientBurstSet = r.clientBurst, true
	} else if o.ClientQPSSet && o.ClientQPS > 0 {
		o.ClientBurst = presets.Defaults.ClientBurst // client-go's default burst
	}
	if err := checkBindAddress(r.metricsAddr); err != nil {
		return nil, err
	}
	if err := oneOf("log-level", r.logLevel, "debug", "info", "error"); err != nil {
		return nil, err
	}
	if err := oneOf("log-format", r.logFormat, "console", "json"); err != nil {
		return nil, err
	}
	if err := oneOf("conflict-reread", r.conflictReread, "api", "cache"); err != nil {
		return nil, err
	}
	if set["queue"] {
		if r.queue == queueKube {
			return nil, usagef("--queue: kube is kube-runtime's scheduler, which only the Rust controller has; controller-runtime's work queue is fifo")
		}
		if err := oneOf("queue", r.queue, queueFIFO); err != nil {
			return nil, err
		}
		q := r.queue
		o.Queue = &q
	}
	if set["priority-queue"] {
		if !hasPriorityQueue() {
			return nil, usagef("--priority-queue: this build's controller-runtime has no priority queue (v0.20 and later have one)")
		}
		v := r.priorityQueue
		o.PriorityQueue = &v
	}
	if set["watch-list"] {
		v := r.watchList
		o.WatchList = &v
	}
	o.StripManagedFields = r.stripManagedFields
	o.LeaderElect = r.leaderElect || p.LeaderElect
	o.Pprof = r.pprof
	if o.Pprof && o.MetricsBindAddress == "0" {
		return nil, usagef("--pprof: needs a metrics server (--metrics-bind-address is 0)")
	}
	return o, nil
}

// flagSpelling finds the flag package's one-dash spelling of a flag name.
var flagSpelling = regexp.MustCompile(`(flag |for |defined: |argument: )-([A-Za-z])`)

// dashDash rewrites the first "-name" in a flag package message to "--name".
func dashDash(msg string) string {
	loc := flagSpelling.FindStringSubmatchIndex(msg)
	if loc == nil {
		return msg
	}
	return msg[:loc[3]] + "-" + msg[loc[3]:]
}

func checkBindAddress(addr string) error {
	if addr == "0" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--metrics-bind-address: %q is not HOST:PORT (or 0 to turn metrics off)", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || strings.Trim(port, "0123456789") != "" || n < 0 || n > 65535 {
		return usagef("--metrics-bind-address: invalid port %q in %q", port, addr)
	}
	return nil
}
