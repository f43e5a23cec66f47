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
	"strings"

	"github.com/BurntSushi/toml"
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

// preset is one [[preset]] row (DESIGN §3).
type preset struct {
	Name          string `toml:"name"`
	Description   string `toml:"description"`
	Workers       int    `toml:"workers"`
	Predicate     string `toml:"predicate"`    // generation | none
	StatusWrite   string `toml:"status_write"` // one of the write* modes
	Annotate      bool   `toml:"annotate"`     // stamp bad-controller/last-seen with an object Update
	ConflictRetry bool   `toml:"conflict_retry"`
}

type presetTable struct {
	Defaults presetDefaults `toml:"defaults"`
	Presets  []preset       `toml:"preset"`
}

var (
	presetDefaultKeys = []string{"preset", "work_ms", "client_burst", "metrics_bind_address", "log_level", "log_format"}
	presetRowKeys     = []string{"name", "description", "workers", "predicate", "status_write", "annotate", "conflict_retry"}
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

// settings is the --print-settings JSON: the same keys and values as the
// Rust controller's (widget_api::presets::Settings). Nothing build-specific.
type settings struct {
	Namespace          string   `json:"namespace"`
	Preset             string   `json:"preset"`
	Workers            int      `json:"workers"`
	Predicate          string   `json:"predicate"`
	StatusWrite        string   `json:"status_write"`
	Annotate           bool     `json:"annotate"`
	ConflictRetry      bool     `json:"conflict_retry"`
	WorkMS             int      `json:"work_ms"`
	ClientRateLimit    string   `json:"client_rate_limit"`
	ClientQPS          *float64 `json:"client_qps"`
	ClientBurst        *int     `json:"client_burst"`
	MetricsBindAddress string   `json:"metrics_bind_address"`
	LogLevel           string   `json:"log_level"`
	LogFormat          string   `json:"log_format"`
	WatchList          bool     `json:"watch_list"`
}

func settingsOf(o *options) settings {
	s := settings{
		Namespace:          o.Namespace,
		Preset:             o.Preset,
		Workers:            o.Workers,
		Predicate:          "none",
		StatusWrite:        o.StatusWrite,
		Annotate:           o.Annotate,
		ConflictRetry:      o.ConflictRetry,
		WorkMS:             o.WorkMS,
		ClientRateLimit:    o.rateLimit(),
		MetricsBindAddress: o.MetricsBindAddress,
		LogLevel:           o.LogLevel,
		LogFormat:          o.LogFormat,
		WatchList:          o.WatchList != nil && *o.WatchList,
	}
	if o.Predicate {
		s.Predicate = "generation"
	}
	if s.ClientRateLimit == rateTokenBucket {
		qps, burst := o.ClientQPS, o.ClientBurst
		s.ClientQPS, s.ClientBurst = &qps, &burst
	}
	return s
}

// settingsJSON is the one line --print-settings writes.
func settingsJSON(o *options) string {
	b, err := json.Marshal(settingsOf(o))
	if err != nil {
		panic(err) // plain strings, numbers and bools always marshal
	}
	return string(b)
}
