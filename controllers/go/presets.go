// The preset table and the --print-settings JSON. presets.toml is a
// byte-identical copy of deploy/presets.toml (go:embed cannot reach
// ../../deploy; TestPresetsCopyMatchesDeploy and a Rust test fail when the
// two drift). This file owns reading it; flags.go applies its rules, the
// same rules crates/widget-api/src/presets.rs applies for the Rust
// controller, and settingsOf gives the JSON both controllers print.

package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"k8s.io/client-go/rest"
)

//go:embed presets.toml
var presetsTOML []byte

// presetDefaults is the table's [defaults]: a flag's value when it is not given.
type presetDefaults struct {
	Preset             string `toml:"preset"`
	WorkMS             int    `toml:"work_ms"`
	ClientBurst        int    `toml:"client_burst"` // token-bucket burst when only --client-qps > 0 is given
	MetricsBindAddress string `toml:"metrics_bind_address"`
	LogLevel           string `toml:"log_level"`
	LogFormat          string `toml:"log_format"`
}

// preset is one [[preset]] row (docs/architecture.md#controller-presets-and-flags).
type preset struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	// Question and Counterpart are for the report only (read by the harness).
	Question      string `toml:"question"`
	Counterpart   string `toml:"counterpart"`
	Workers       int    `toml:"workers"`
	Predicate     string `toml:"predicate"`    // generation | none
	StatusWrite   string `toml:"status_write"` // one of the write* modes
	Annotate      bool   `toml:"annotate"`     // stamp bad-controller/last-seen with an object Update
	ConflictRetry bool   `toml:"conflict_retry"`
	// The anti-pattern settings (deploy/presets.toml documents each).
	Read            string `toml:"read"` // cache | api
	ListInReconcile bool   `toml:"list_in_reconcile"`
	RequeueAfterMS  int    `toml:"requeue_after_ms"`
	StatusIfChanged bool   `toml:"status_if_changed"`
	Finalizer       bool   `toml:"finalizer"`
	Cache           string `toml:"cache"` // namespace | cluster | metadata
	// Replicas is for the harness only; LeaderElect turns on --leader-elect.
	Replicas    int  `toml:"replicas"`
	LeaderElect bool `toml:"leader_elect"`
}

// maxReplicas bounds a preset's replicas, as the harness bounds its key.
const maxReplicas = 16

// Read and cache modes (read, cache in the table).
const (
	readCache      = "cache"
	readAPI        = "api"
	cacheNamespace = "namespace"
	cacheCluster   = "cluster"
	cacheMetadata  = "metadata"
)

// finalizerName is the finalizer the finalizer setting adds and removes.
const finalizerName = "benchmark.example.com/cleanup"

type presetTable struct {
	Defaults presetDefaults `toml:"defaults"`
	Presets  []preset       `toml:"preset"`
}

var (
	presetDefaultKeys = []string{"preset", "work_ms", "client_burst", "metrics_bind_address", "log_level", "log_format"}
	presetRowKeys     = []string{"name", "description", "question", "counterpart", "workers", "predicate", "status_write", "annotate", "conflict_retry",
		"read", "list_in_reconcile", "requeue_after_ms", "status_if_changed", "finalizer", "cache", "replicas", "leader_elect"}
)

// parsePresetTable decodes a presets file strictly: no unknown keys, every
// key present, values in range, unique names, and a default preset that exists.
func parsePresetTable(data []byte) (*presetTable, error) {
	var t presetTable
	md, err := toml.Decode(string(data), &t)
	if err != nil {
		return nil, err
	}
	if u := md.Undecoded(); len(u) > 0 {
		return nil, fmt.Errorf("unknown keys %v", u)
	}
	seen := map[string]int{}
	for _, k := range md.Keys() {
		seen[k.String()]++
	}
	for _, k := range presetDefaultKeys {
		if seen["defaults."+k] != 1 {
			return nil, fmt.Errorf("defaults.%s is missing", k)
		}
	}
	for _, k := range presetRowKeys {
		if seen["preset."+k] != len(t.Presets) {
			return nil, fmt.Errorf("a [[preset]] lacks %s", k)
		}
	}
	for i, p := range t.Presets {
		for _, q := range t.Presets[:i] {
			if q.Name == p.Name {
				return nil, fmt.Errorf("preset %q is defined twice", p.Name)
			}
		}
		if p.Workers < 1 || p.Workers > maxWorkers {
			return nil, fmt.Errorf("preset %q: workers must be between 1 and %d", p.Name, maxWorkers)
		}
		if err := oneOf("predicate", p.Predicate, "generation", "none"); err != nil {
			return nil, fmt.Errorf("preset %q: %v", p.Name, err)
		}
		if err := oneOf("status-write", p.StatusWrite, writeUpdate, writePatch, writeApply, writeObject); err != nil {
			return nil, fmt.Errorf("preset %q: %v", p.Name, err)
		}
		if err := oneOf("read", p.Read, readCache, readAPI); err != nil {
			return nil, fmt.Errorf("preset %q: %v", p.Name, err)
		}
		if err := oneOf("cache", p.Cache, cacheNamespace, cacheCluster, cacheMetadata); err != nil {
			return nil, fmt.Errorf("preset %q: %v", p.Name, err)
		}
		if err := oneOf("question", p.Question, "throughput", "coverage", "steady-state", "deletion", "memory", "duplicates"); err != nil {
			return nil, fmt.Errorf("preset %q: %v", p.Name, err)
		}
		if p.Counterpart != "" && (p.Counterpart == p.Name || t.lookup(p.Counterpart) == nil) {
			return nil, fmt.Errorf("preset %q: counterpart %q is not another preset", p.Name, p.Counterpart)
		}
		if p.Replicas < 1 || p.Replicas > maxReplicas {
			return nil, fmt.Errorf("preset %q: replicas must be 1 to %d", p.Name, maxReplicas)
		}
		if p.RequeueAfterMS < 0 {
			return nil, fmt.Errorf("preset %q: requeue_after_ms must be >= 0", p.Name)
		}
	}
	d := t.Defaults
	if t.lookup(d.Preset) == nil {
		return nil, fmt.Errorf("defaults.preset %q is not a preset", d.Preset)
	}
	if d.ClientBurst < 1 {
		return nil, fmt.Errorf("defaults.client_burst must be at least 1")
	}
	if d.WorkMS < 0 {
		return nil, fmt.Errorf("defaults.work_ms must be >= 0")
	}
	if err := checkBindAddress(d.MetricsBindAddress); err != nil {
		return nil, err
	}
	if err := oneOf("log-level", d.LogLevel, "debug", "info", "error"); err != nil {
		return nil, err
	}
	if err := oneOf("log-format", d.LogFormat, "console", "json"); err != nil {
		return nil, err
	}
	return &t, nil
}

func (t *presetTable) lookup(name string) *preset {
	for i := range t.Presets {
		if t.Presets[i].Name == name {
			return &t.Presets[i]
		}
	}
	return nil
}

// names lists the presets in the file's order, joined with |.
func (t *presetTable) names() string {
	names := make([]string, len(t.Presets))
	for i, p := range t.Presets {
		names[i] = p.Name
	}
	return strings.Join(names, "|")
}

// presets is the embedded table; a bad table is a build defect, caught by the tests.
var presets = func() *presetTable {
	t, err := parsePresetTable(presetsTOML)
	if err != nil {
		panic("presets.toml: " + err.Error())
	}
	return t
}()

// Client rate limit our flags apply (client_rate_limit in the settings JSON).
const (
	rateLibraryDefault = "library-default" // --client-qps not given
	rateUnlimited      = "unlimited"       // --client-qps <= 0
	rateTokenBucket    = "token-bucket"    // --client-qps > 0
)

// Work-queue orders (--queue): the Go controller has client-go's only.
const (
	queueFIFO = "fifo"
	queueKube = "kube"
)

// The controller-level retry policy both controllers print: controller-runtime's
// default rate limiter (workqueue.DefaultControllerRateLimiter), the larger of
// a per-item exponential backoff and one overall token bucket. With the
// priority queue on, controller-runtime's default is the per-item backoff
// alone (no overall bucket). A test checks
// these against the library's limiter.
const (
	retryBackoffBaseMS = 5
	retryBackoffCapS   = 1000
	retryOverallQPS    = 10
	retryOverallBurst  = 100
)

// Leader election: controller-runtime's manager defaults (client-go's
// values), stated here so that --print-settings can show them.
const (
	leaseName           = "widget-controller-leader"
	leaseDurationS      = 15
	leaseRenewDeadlineS = 10
	leaseRetryPeriodS   = 2
)

type leaderElection struct {
	LeaseName      string `json:"lease_name"`
	LeaseDurationS int    `json:"lease_duration_s"`
	RenewDeadlineS *int   `json:"renew_deadline_s"`
	RetryPeriodS   int    `json:"retry_period_s"`
}

// clientBuckets are the REST clients that each have their own token bucket:
// the informers', the manager's client and its API reader.
var clientBuckets = []string{"informer", "client", "api-reader"}

// settings is the --print-settings JSON: the same keys and values as the
// Rust controller's (widget_api::presets::Settings). Build-specific only in
// effective_client_*: the limit the library's defaults leave in place.
type settings struct {
	Namespace          string   `json:"namespace"`
	Preset             string   `json:"preset"`
	Workers            int      `json:"workers"`
	Predicate          string   `json:"predicate"`
	StatusWrite        string   `json:"status_write"`
	Annotate           bool     `json:"annotate"`
	ConflictRetry      bool     `json:"conflict_retry"`
	Read               string   `json:"read"`
	ListInReconcile    bool     `json:"list_in_reconcile"`
	RequeueAfterMS     int      `json:"requeue_after_ms"`
	StatusIfChanged    bool     `json:"status_if_changed"`
	Finalizer          bool     `json:"finalizer"`
	Cache              string   `json:"cache"`
	WorkMS             int      `json:"work_ms"`
	ClientRateLimit    string   `json:"client_rate_limit"`
	ClientQPS          *float64 `json:"client_qps"`
	ClientBurst        *int     `json:"client_burst"`
	MetricsBindAddress string   `json:"metrics_bind_address"`
	LogLevel           string   `json:"log_level"`
	LogFormat          string   `json:"log_format"`
	WatchList          bool     `json:"watch_list"`
	StripManagedFields bool     `json:"strip_managed_fields"`
	Queue              *string  `json:"queue"`
	// PriorityQueue: controller-runtime's priority queue when
	// --priority-queue is given; null: the runtime's default (the Rust
	// controller has none and always prints null).
	PriorityQueue *bool `json:"priority_queue"`
	DebounceMS    int   `json:"debounce_ms"`
	// The limit each client runs with, library defaults included; null: no limiter.
	EffectiveClientQPS   *float64 `json:"effective_client_qps"`
	EffectiveClientBurst *int     `json:"effective_client_burst"`
	ClientBuckets        []string `json:"client_buckets"`
	RetryBackoffBaseMS   int      `json:"retry_backoff_base_ms"`
	RetryBackoffCapS     int      `json:"retry_backoff_cap_s"`
	// The overall bucket: null with --priority-queue=true, where
	// controller-runtime's default limiter is the per-item backoff alone.
	RetryOverallQPS   *float64 `json:"retry_overall_qps"`
	RetryOverallBurst *int     `json:"retry_overall_burst"`
	// LeaderElection: null without --leader-elect.
	LeaderElection *leaderElection `json:"leader_election"`
	// Pprof: printed only with --pprof, so that defaults print alike.
	Pprof bool `json:"pprof,omitempty"`
}

func settingsOf(o *options) (settings, error) {
	s := settings{
		Namespace:          o.Namespace,
		Preset:             o.Preset,
		Workers:            o.Workers,
		Predicate:          "none",
		StatusWrite:        o.StatusWrite,
		Annotate:           o.Annotate,
		ConflictRetry:      o.ConflictRetry,
		Read:               o.Read,
		ListInReconcile:    o.ListInReconcile,
		RequeueAfterMS:     o.RequeueAfterMS,
		StatusIfChanged:    o.StatusIfChanged,
		Finalizer:          o.Finalizer,
		Cache:              o.Cache,
		WorkMS:             o.WorkMS,
		ClientRateLimit:    o.rateLimit(),
		MetricsBindAddress: o.MetricsBindAddress,
		LogLevel:           o.LogLevel,
		LogFormat:          o.LogFormat,
		WatchList:          o.WatchList != nil && *o.WatchList,
		StripManagedFields: o.StripManagedFields,
		Pprof:              o.Pprof,
		Queue:              o.Queue,
		PriorityQueue:      o.PriorityQueue,
		ClientBuckets:      clientBuckets,
		RetryBackoffBaseMS: retryBackoffBaseMS,
		RetryBackoffCapS:   retryBackoffCapS,
	}
	if o.PriorityQueue == nil || !*o.PriorityQueue {
		q, b := float64(retryOverallQPS), retryOverallBurst
		s.RetryOverallQPS, s.RetryOverallBurst = &q, &b
	}
	if o.Predicate {
		s.Predicate = "generation"
	}
	if o.LeaderElect {
		d := leaseRenewDeadlineS
		s.LeaderElection = &leaderElection{leaseName, leaseDurationS, &d, leaseRetryPeriodS}
	}
	if s.ClientRateLimit == rateTokenBucket {
		qps, burst := o.ClientQPS, o.ClientBurst
		s.ClientQPS, s.ClientBurst = &qps, &burst
	}
	qps, burst, err := effectiveClientLimit(o)
	if err != nil {
		return s, err
	}
	if qps > 0 {
		q, b := float64(qps), burst
		s.EffectiveClientQPS, s.EffectiveClientBurst = &q, &b
	}
	return s, nil
}

// effectiveClientLimit is the QPS and burst the controller's clients run
// with: restConfig (the run's own code path, library defaults included)
// applied to a throwaway kubeconfig that names a server nobody contacts.
// client-go fills an unset burst with its default 10 (rest.DefaultBurst).
func effectiveClientLimit(o *options) (float32, int, error) {
	dir, err := os.MkdirTemp("", "widget-controller-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kubeconfig")
	const kubeconfig = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n" +
		"users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		return 0, 0, err
	}
	// restConfig points KUBECONFIG at the file; put the environment back.
	if old, had := os.LookupEnv("KUBECONFIG"); had {
		defer os.Setenv("KUBECONFIG", old)
	} else {
		defer os.Unsetenv("KUBECONFIG")
	}
	probe := *o
	probe.Kubeconfig = path
	cfg, err := restConfig(&probe)
	if err != nil {
		return 0, 0, err
	}
	burst := cfg.Burst
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	return cfg.QPS, burst, nil
}

// settingsJSON is the one line --print-settings writes.
func settingsJSON(o *options) (string, error) {
	s, err := settingsOf(o)
	if err != nil {
		return "", fmt.Errorf("resolving the effective client limit: %w", err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain strings, numbers and bools always marshal
	}
	return string(b), nil
}
