// Black-box tests of the built controller against a real kube-apiserver
// (envtest pointed at ctrlbench's etcd and kube-apiserver): every preset's
// behaviour, metric names, signals and flag errors, for whichever
// controller-runtime build this is compiled with.

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// The tests run the controller as a child process: the test binary re-executes
// itself with childEnv set, and TestMain then runs realMain — the very code
// main() runs — with the child's arguments. Each case gets its own process
// (own metrics registry, own controller name space) and its own namespace in
// one shared envtest control plane.

const childEnv = "WIDGET_CONTROLLER_TEST_CHILD"

var (
	kubeconfigPath string
	k8s            client.Client
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	flag.Parse()
	// The cases mostly wait on the API server; run them all at once unless
	// the caller chose a -parallel value.
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", "16")
	}

	// Benchmarks alone (-run '^$') need no API server.
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "^$" {
		return m.Run()
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "FAIL: KUBEBUILDER_ASSETS is not set: point it at a directory holding etcd and kube-apiserver, e.g. KUBEBUILDER_ASSETS=$HOME/.cache/ctrlbench/k8s/1.34.12 go test ./...")
		return 1
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))

	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "deploy", "crd.yaml")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting envtest (KUBEBUILDER_ASSETS=%s): %v\n", os.Getenv("KUBEBUILDER_ASSETS"), err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
		}
	}()

	dir, err := os.MkdirTemp("", "widget-controller-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	user, err := env.AddUser(envtest.User{Name: "ctrlbench-test", Groups: []string{"system:masters"}}, nil)
	if err == nil {
		var kc []byte
		if kc, err = user.KubeConfig(); err == nil {
			kubeconfigPath = filepath.Join(dir, "kubeconfig")
			err = os.WriteFile(kubeconfigPath, kc, 0o600)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: writing kubeconfig:", err)
		return 1
	}
	scheme, err := newScheme()
	if err == nil {
		k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: test client:", err)
		return 1
	}
	return m.Run()
}

// controllerRuntimeVersion is the controller-runtime version this test
// binary (and so the child controller) was built with, or "".
func controllerRuntimeVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == "sigs.k8s.io/controller-runtime" {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

// ---- child process -------------------------------------------------------

type proc struct {
	cmd     *exec.Cmd
	addr    string
	logPath string
	exited  chan struct{} // closed once the process has been waited for
	exitErr error
	// shutdownMayHang: controller-runtime v0.20–v0.22's priority queue can
	// leave workers blocked in GetWithPriority after shutdown (upstream
	// controller-runtime#3239, fixed in v0.23), so the manager gives up after its 30 s
	// grace period and the program exits 1; tolerated for those builds.
	shutdownMayHang bool

	mu    sync.Mutex
	lines []string
}

func childCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "KUBECONFIG="+kubeconfigPath)
	return cmd
}

// startController starts the controller for namespace ns and waits for its
// metrics-address= line.
func startController(t *testing.T, ns string, args ...string) *proc {
	t.Helper()
	full := append([]string{"--namespace", ns, "--metrics-bind-address", "127.0.0.1:0"}, args...)
	p := &proc{cmd: childCommand(full...), logPath: filepath.Join(t.TempDir(), "controller.log"), exited: make(chan struct{})}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = logFile
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			if len(p.lines) == 1 {
				first <- sc.Text()
			}
			p.mu.Unlock()
		}
		p.exitErr = p.cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("controller log tail (%s):\n%s", strings.Join(full, " "), tail(p.logPath, 30))
		}
	})
	select {
	case line := <-first:
		addr, ok := strings.CutPrefix(line, "metrics-address=")
		if !ok || addr == "" {
			t.Fatalf("first stdout line is %q, want metrics-address=HOST:PORT", line)
		}
		p.addr = addr
	case <-p.exited:
		t.Fatalf("controller exited before printing metrics-address=: %v", p.exitErr)
	case <-time.After(30 * time.Second):
		t.Fatalf("no metrics-address= line within 30 s")
	}
	return p
}

// stop sends SIGTERM and expects exit code 0 and exactly one stdout line.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM: %v", err)
	}
	select {
	case <-p.exited:
		if p.exitErr != nil && p.shutdownMayHang &&
			strings.Contains(tail(p.logPath, 5), "failed waiting for all runnables to end within grace period") {
			t.Logf("known controller-runtime priority-queue shutdown hang: %v", p.exitErr)
		} else if p.exitErr != nil {
			t.Errorf("controller did not exit 0 after SIGTERM: %v", p.exitErr)
		}
	case <-time.After(45 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("controller still running 45 s after SIGTERM")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.lines) != 1 {
		t.Errorf("stdout had %d lines, want exactly the metrics-address= line: %q", len(p.lines), p.lines)
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ---- Prometheus text -----------------------------------------------------

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

type page []sample

func (p *proc) scrape(t *testing.T) page {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: status %d, %v", resp.StatusCode, err)
	}
	pg, err := parseText(string(body))
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return pg
}

// parseText reads Prometheus text exposition format (samples only).
func parseText(text string) (page, error) {
	var out page
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}}
		i := strings.IndexAny(line, "{ ")
		if i < 0 {
			return nil, fmt.Errorf("bad sample line %q", line)
		}
		s.name = line[:i]
		rest := line[i:]
		if rest[0] == '{' {
			rest = rest[1:]
			for {
				rest = strings.TrimLeft(rest, " ,")
				if strings.HasPrefix(rest, "}") {
					rest = rest[1:]
					break
				}
				eq := strings.Index(rest, "=\"")
				if eq < 0 {
					return nil, fmt.Errorf("bad labels in %q", line)
				}
				key := rest[:eq]
				rest = rest[eq+2:]
				var val strings.Builder
				j := 0
				for ; j < len(rest) && rest[j] != '"'; j++ {
					if rest[j] == '\\' && j+1 < len(rest) {
						j++
						if rest[j] == 'n' {
							val.WriteByte('\n')
							continue
						}
					}
					val.WriteByte(rest[j])
				}
				if j >= len(rest) {
					return nil, fmt.Errorf("unterminated label value in %q", line)
				}
				s.labels[key] = val.String()
				rest = rest[j+1:]
			}
		}
		fields := strings.Fields(rest)
		if len(fields) < 1 {
			return nil, fmt.Errorf("no value in %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("bad value in %q: %v", line, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out, nil
}

// matches reports whether s is a sample of name whose labels include match
// (key=value pairs).
func (s sample) matches(name string, match []string) bool {
	if s.name != name {
		return false
	}
	for i := 0; i+1 < len(match); i += 2 {
		if s.labels[match[i]] != match[i+1] {
			return false
		}
	}
	return true
}

// sum adds every sample of name whose labels include match (key=value pairs).
func (pg page) sum(name string, match ...string) float64 {
	var total float64
	for _, s := range pg {
		if s.matches(name, match) {
			total += s.value
		}
	}
	return total
}

func (pg page) has(name string, match ...string) bool {
	for _, s := range pg {
		if s.matches(name, match) {
			return true
		}
	}
	return false
}

// ---- cluster helpers -----------------------------------------------------

const numWidgets = 20

func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cb-" + prefix + "-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns.Name
}

func createWidgets(t *testing.T, ns string) {
	t.Helper()
	for i := 1; i <= numWidgets; i++ {
		w := &Widget{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("widget-%06d", i), Namespace: ns},
			Spec:       WidgetSpec{Count: int64(i), Message: fmt.Sprintf("benchmark run %d", i)},
		}
		if err := k8s.Create(context.Background(), w); err != nil {
			t.Fatalf("creating %s: %v", w.Name, err)
		}
	}
}

func listWidgets(t *testing.T, ns string) []Widget {
	t.Helper()
	var l WidgetList
	if err := k8s.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing widgets: %v", err)
	}
	return l.Items
}

func readyCount(t *testing.T, ns string) int {
	n := 0
	for _, w := range listWidgets(t, ns) {
		if w.Status != nil && w.Status.Phase == phaseReady {
			n++
		}
	}
	return n
}

func annotation(t *testing.T, ns, name string) string {
	t.Helper()
	var w Widget
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &w); err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return w.Annotations[lastSeenAnnotation]
}

// waitFor polls cond every 200 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v (%s)", what, timeout, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ---- the preset cases ----------------------------------------------------

type outcome int

const (
	converges   outcome = iota // all Ready, then quiet
	loops                      // all Ready, reconciles + annotation keep changing
	never                      // never Ready, status empty, annotation present
	requeues                   // all Ready, then every object reconciled again every second
	statusLoops                // all Ready, reconciles + status.lastUpdated keep changing, no annotation
)

// gets counts the GET requests (reads, LISTs and watches) the controller made.
func gets(pg page) float64 { return pg.sum("rest_client_requests_total", "method", "GET") }

// requiredMetrics must all be on /metrics after the first reconcile.
var requiredMetrics = []string{
	"workqueue_depth", "workqueue_adds_total", "workqueue_retries_total", "workqueue_unfinished_work_seconds",
	"controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
	"controller_runtime_reconcile_time_seconds_bucket", "controller_runtime_active_workers",
	"controller_runtime_max_concurrent_reconciles", "rest_client_requests_total",
	"process_cpu_seconds_total", "process_resident_memory_bytes",
	"rest_client_rate_limiter_duration_seconds_bucket",
}

func TestPresets(t *testing.T) {
	crVersion := controllerRuntimeVersion()
	t.Logf("controller-runtime %s", crVersion)
	type presetCase struct {
		name    string
		args    []string
		want    outcome
		workers int
		no409   bool
		check   func(t *testing.T, pg page)
	}
	cases := []presetCase{
		{name: "good", args: []string{"--preset", "good"}, want: converges, workers: 5,
			check: func(t *testing.T, pg page) {
				// Unset --client-qps keeps the library default: v0.18's
				// GetConfig sets a 20 QPS limiter, v0.22 and v0.25 turn it off.
				n := pg.sum("rest_client_rate_limiter_duration_seconds_count")
				switch {
				case strings.HasPrefix(crVersion, "v0.18.") && n == 0:
					t.Errorf("controller-runtime %s: no request went through the default client limiter", crVersion)
				case !strings.HasPrefix(crVersion, "v0.18.") && n != 0:
					t.Errorf("controller-runtime %s: %v requests waited in a client limiter that should be off", crVersion, n)
				}
			}},
		{name: "good-single", args: []string{"--preset", "good-single", "--log-level", "info"}, want: converges, workers: 1},
		{name: "good-patch", args: []string{"--preset", "good-patch", "--log-level", "info"}, want: converges, workers: 5, no409: true},
		{name: "good-single-patch", args: []string{"--preset", "good-single-patch", "--log-level", "info"}, want: converges, workers: 1, no409: true},
		{name: "good-apply", args: []string{"--preset", "good", "--status-write", "apply", "--log-level", "info"}, want: converges, workers: 5, no409: true},
		{name: "good-single-limited",
			// 3 QPS, not 5: beside two other envtest runs on 2 cores a
			// reconcile's own time came near 5 QPS's 0.2 s between tokens,
			// and the requests waited 0.6-0.96 s in all.
			args: []string{"--preset", "good-single", "--client-qps", "3", "--client-burst", "2", "--watch-list",
				"--conflict-reread", "cache", "--log-format", "json", "--work-ms", "0"},
			want: converges, workers: 1,
			check: func(t *testing.T, pg page) {
				if n := pg.sum("rest_client_rate_limiter_duration_seconds_count"); n < numWidgets {
					t.Errorf("rate limiter observed %v requests, want >= %d", n, numWidgets)
				}
				if s := pg.sum("rest_client_rate_limiter_duration_seconds_sum"); s < 1 {
					t.Errorf("requests waited %.3f s in a 3 QPS / burst 2 limiter, want >= 1 s", s)
				}
			}},
		{name: "bad-fix", args: []string{"--preset", "bad-fix", "--log-level", "error"}, want: loops, workers: 5},
		{name: "bad-fix-single", args: []string{"--preset", "bad-fix-single", "--log-level", "error"}, want: loops, workers: 1},
		{name: "bad", args: []string{"--preset", "bad", "--log-level", "error"}, want: never, workers: 1},
		{name: "bad-concurrent", args: []string{"--preset", "bad-concurrent", "--log-level", "error"}, want: never, workers: 5},
		{name: "uncached-read", args: []string{"--preset", "uncached-read", "--log-level", "info"}, want: converges, workers: 5,
			check: func(t *testing.T, pg page) {
				if n := gets(pg); n < numWidgets {
					t.Errorf("%v GET requests, want >= %d (one GET per reconcile)", n, numWidgets)
				}
			}},
		{name: "list-in-reconcile", args: []string{"--preset", "list-in-reconcile", "--log-level", "info"}, want: converges, workers: 5,
			check: func(t *testing.T, pg page) {
				if n := gets(pg); n < numWidgets {
					t.Errorf("%v GET requests, want >= %d (one LIST per reconcile)", n, numWidgets)
				}
			}},
		{name: "metadata-only", args: []string{"--preset", "metadata-only", "--log-level", "info"}, want: converges, workers: 5,
			check: func(t *testing.T, pg page) {
				if n := gets(pg); n < numWidgets {
					t.Errorf("%v GET requests, want >= %d (the cache has no spec: one GET per reconcile)", n, numWidgets)
				}
			}},
		{name: "good-reads-from-cache", args: []string{"--preset", "good", "--log-level", "info"}, want: converges, workers: 5,
			check: func(t *testing.T, pg page) {
				if n := gets(pg); n >= numWidgets {
					t.Errorf("%v GET requests, want < %d (reads come from the cache)", n, numWidgets)
				}
			}},
		{name: "requeue-after", args: []string{"--preset", "requeue-after", "--log-level", "info"}, want: requeues, workers: 5},
		// More than a second of work per reconcile: every rewrite lands in a
		// new second, so the loop never stops (as under any real backlog).
		{name: "unconditional-status", args: []string{"--preset", "unconditional-status", "--log-level", "info", "--work-ms", "1100"},
			want: statusLoops, workers: 5},
		{name: "conditional-status", args: []string{"--preset", "conditional-status", "--log-level", "info"}, want: converges, workers: 5},
		{name: "finalizer", args: []string{"--preset", "finalizer", "--log-level", "info"}, want: converges, workers: 5},
		{name: "cache-cluster-wide", args: []string{"--preset", "cache-cluster-wide", "--log-level", "info"}, want: converges, workers: 5,
			check: func(t *testing.T, pg page) {
				// The namespace filter adds to the generation predicate: one
				// reconcile per widget, none for its own status writes.
				if n := pg.sum("controller_runtime_reconcile_total", "controller", controllerName); n != numWidgets {
					t.Errorf("reconcile_total %v, want %d", n, numWidgets)
				}
			}},
	}
	if hasPriorityQueue() {
		// Both settings of controller-runtime's priority queue, whatever the build's default.
		for _, on := range []string{"true", "false"} {
			cases = append(cases,
				presetCase{name: "good-priority-" + on, args: []string{"--preset", "good", "--priority-queue=" + on, "--log-level", "info"}, want: converges, workers: 5},
				presetCase{name: "bad-fix-priority-" + on, args: []string{"--preset", "bad-fix", "--priority-queue=" + on, "--log-level", "error"}, want: loops, workers: 5})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			ns := newNamespace(t, tc.name)
			createWidgets(t, ns)
			// A widget in another namespace that no controller owns: a
			// cluster-wide cache sees it, but only our namespace is reconciled.
			other := newNamespace(t, tc.name+"-other")
			if err := k8s.Create(context.Background(), &Widget{
				ObjectMeta: metav1.ObjectMeta{Name: "foreign", Namespace: other},
				Spec:       WidgetSpec{Count: 1},
			}); err != nil {
				t.Fatalf("creating the foreign widget: %v", err)
			}
			p := startController(t, ns, tc.args...)

			reconciles := func() float64 {
				return p.scrape(t).sum("controller_runtime_reconcile_total", "controller", controllerName)
			}
			switch tc.want {
			case converges:
				waitFor(t, 30*time.Second, "all widgets Ready", func() (bool, string) {
					n := readyCount(t, ns)
					return n == numWidgets, fmt.Sprintf("%d/%d Ready", n, numWidgets)
				})
				t.Logf("%d/%d Ready after %v", numWidgets, numWidgets, time.Since(start).Round(time.Millisecond))
				for _, w := range listWidgets(t, ns) {
					if w.Status.ProcessedCount != w.Spec.Count {
						t.Errorf("%s: processedCount %d, want %d", w.Name, w.Status.ProcessedCount, w.Spec.Count)
					}
					if _, err := time.Parse(time.RFC3339, w.Status.LastUpdated); err != nil {
						t.Errorf("%s: lastUpdated %q: %v", w.Name, w.Status.LastUpdated, err)
					}
					if _, ok := w.Annotations[lastSeenAnnotation]; ok {
						t.Errorf("%s: good preset stamped the annotation", w.Name)
					}
				}
				waitFor(t, 10*time.Second, "queue idle", func() (bool, string) {
					pg := p.scrape(t)
					d := pg.sum("workqueue_depth", "name", controllerName)
					a := pg.sum("controller_runtime_active_workers", "controller", controllerName)
					return d == 0 && a == 0, fmt.Sprintf("depth %v, active %v", d, a)
				})
				r1 := reconciles()
				time.Sleep(3 * time.Second)
				if r2 := reconciles(); r2 != r1 {
					t.Errorf("reconcile_total moved from %v to %v after convergence (loop)", r1, r2)
				} else if r1 < numWidgets {
					t.Errorf("reconcile_total %v, want >= %d", r1, numWidgets)
				}
			case loops:
				// client-go's FIFO queue reaches every object while the loop
				// goes on; controller-runtime's priority queue serves the
				// looping keys (updates) ahead of the initial list's, so
				// some widgets may never be reconciled: only the loop is required.
				looped := loopedWidget(t, ns, usesPriorityQueue(crVersion, tc.args))
				r1, a1 := reconciles(), annotation(t, ns, looped)
				if a1 == "" {
					t.Errorf("%s has no %s annotation", looped, lastSeenAnnotation)
				}
				waitFor(t, 15*time.Second, "reconciles and annotation keep changing", func() (bool, string) {
					r2, a2 := reconciles(), annotation(t, ns, looped)
					return r2 > r1 && a2 != a1, fmt.Sprintf("reconciles %v -> %v, annotation %q -> %q", r1, r2, a1, a2)
				})
				t.Logf("%d/%d Ready while looping", readyCount(t, ns), numWidgets)
			case requeues:
				waitFor(t, 30*time.Second, "all widgets Ready", func() (bool, string) {
					n := readyCount(t, ns)
					return n == numWidgets, fmt.Sprintf("%d/%d Ready", n, numWidgets)
				})
				r1 := reconciles()
				time.Sleep(3 * time.Second)
				// Each object once a second: about 3 × numWidgets more.
				if r2 := reconciles(); r2-r1 < 2*numWidgets {
					t.Errorf("reconcile_total moved from %v to %v in 3 s, want >= %d more (requeue every second)", r1, r2, 2*numWidgets)
				}
				if n := p.scrape(t).sum("controller_runtime_reconcile_total", "controller", controllerName, "result", "requeue_after"); n < numWidgets {
					t.Errorf(`reconcile_total{result="requeue_after"} %v, want >= %d`, n, numWidgets)
				}
			case statusLoops:
				// As for loops: the priority queue may starve some widgets.
				looped := loopedWidget(t, ns, usesPriorityQueue(crVersion, tc.args))
				lastUpdated := func() string {
					var w Widget
					if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: looped}, &w); err != nil {
						t.Fatalf("get: %v", err)
					}
					return w.Status.LastUpdated
				}
				r1, l1 := reconciles(), lastUpdated()
				waitFor(t, 15*time.Second, "reconciles and status.lastUpdated keep changing", func() (bool, string) {
					r2, l2 := reconciles(), lastUpdated()
					return r2 > r1+numWidgets && l2 != l1, fmt.Sprintf("reconciles %v -> %v, lastUpdated %q -> %q", r1, r2, l1, l2)
				})
				if a := annotation(t, ns, looped); a != "" {
					t.Errorf("annotation %q stamped, want none", a)
				}
				t.Logf("%d/%d Ready while looping", readyCount(t, ns), numWidgets)
			case never:
				time.Sleep(10 * time.Second)
				ws := listWidgets(t, ns)
				if len(ws) != numWidgets {
					t.Fatalf("%d widgets, want %d", len(ws), numWidgets)
				}
				// The priority queue serves the looping keys first, so some
				// widgets may never be annotated there.
				prio, annotated := usesPriorityQueue(crVersion, tc.args), 0
				for _, w := range ws {
					if w.Status != nil && *w.Status != (WidgetStatus{}) {
						t.Errorf("%s: stored status %+v, want empty (the server drops status on object Update)", w.Name, *w.Status)
					}
					if w.Annotations[lastSeenAnnotation] != "" {
						annotated++
					} else if !prio {
						t.Errorf("%s: no %s annotation", w.Name, lastSeenAnnotation)
					}
				}
				if annotated == 0 {
					t.Errorf("no widget has the %s annotation", lastSeenAnnotation)
				}
				t.Logf("%d/%d annotated", annotated, numWidgets)
				if r := reconciles(); r <= numWidgets {
					t.Errorf("reconcile_total %v, want > %d (annotation loop)", r, numWidgets)
				}
			}

			pg := p.scrape(t)
			for _, name := range requiredMetrics {
				if !pg.has(name) {
					t.Errorf("metric %s missing from /metrics", name)
				}
			}
			if !pg.has("controller_runtime_reconcile_total", "controller", controllerName, "result", "success") {
				t.Errorf(`controller_runtime_reconcile_total{controller="widget",result="success"} missing`)
			}
			if !pg.has("workqueue_depth", "name", controllerName) {
				t.Errorf(`workqueue_depth{name="widget"} missing`)
			}
			if got := pg.sum("controller_runtime_max_concurrent_reconciles", "controller", controllerName); got != float64(tc.workers) {
				t.Errorf("max_concurrent_reconciles %v, want %d", got, tc.workers)
			}
			if !pg.has("rest_client_requests_total", "code", "200", "method", "PUT") &&
				!pg.has("rest_client_requests_total", "code", "200", "method", "PATCH") {
				t.Errorf("rest_client_requests_total has no successful write {code,method}")
			}
			if tc.no409 {
				if n := pg.sum("rest_client_requests_total", "code", "409"); n != 0 {
					t.Errorf("%v requests answered 409 Conflict, want none", n)
				}
			}
			if tc.check != nil {
				tc.check(t, pg)
			}
			var foreign Widget
			if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: other, Name: "foreign"}, &foreign); err != nil {
				t.Errorf("get the foreign widget: %v", err)
			} else if foreign.Status != nil && foreign.Status.Phase != "" || len(foreign.Finalizers) > 0 {
				t.Errorf("the widget in namespace %s was reconciled: %+v", other, foreign)
			}
			if tc.name == "finalizer" {
				checkFinalizer(t, ns)
			}
			var minor int
			fmt.Sscanf(crVersion, "v0.%d.", &minor)
			p.shutdownMayHang = minor < 23 && usesPriorityQueue(crVersion, tc.args)
			p.stop(t)
			t.Logf("done in %v", time.Since(start).Round(time.Millisecond))
		})
	}
}

// checkFinalizer: every widget carries the finalizer, and a deleted one goes
// away (the controller removes the finalizer).
func checkFinalizer(t *testing.T, ns string) {
	t.Helper()
	for _, w := range listWidgets(t, ns) {
		if !strings.Contains(strings.Join(w.Finalizers, ","), finalizerName) {
			t.Errorf("%s: finalizers %v, want %s", w.Name, w.Finalizers, finalizerName)
		}
	}
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget-000001"}}
	if err := k8s.Delete(context.Background(), w); err != nil {
		t.Fatalf("deleting %s: %v", w.Name, err)
	}
	waitFor(t, 15*time.Second, "the deleted widget is gone", func() (bool, string) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(w), &Widget{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// ---- flags -----------------------------------------------------------------

func TestParseFlagsPresets(t *testing.T) {
	for _, want := range presets.Presets {
		o, err := parseFlags([]string{"--namespace", "ns", "--preset", want.Name})
		if err != nil {
			t.Fatalf("%s: %v", want.Name, err)
		}
		if o.Workers != want.Workers || o.Predicate != (want.Predicate == "generation") || o.StatusWrite != want.StatusWrite ||
			o.Annotate != want.Annotate || o.ConflictRetry != want.ConflictRetry {
			t.Errorf("%s: got %+v, want %+v", want.Name, o, want)
		}
	}
	o, err := parseFlags([]string{"--namespace", "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Preset != "good" || o.Workers != 5 || !o.Predicate || o.StatusWrite != writeUpdate || o.Annotate ||
		!o.ConflictRetry || o.ConflictReread != "api" || o.WorkMS != 10 || o.ClientQPSSet || o.ClientBurstSet ||
		o.MetricsBindAddress != "127.0.0.1:0" || o.LogLevel != "debug" || o.LogFormat != "console" || o.WatchList != nil ||
		o.PrintSettings {
		t.Errorf("defaults: %+v", o)
	}
	// Spot-check the table against docs/architecture.md#controller-presets-and-flags.
	table := map[string]string{
		"good": "5 generation update false true", "good-single": "1 generation update false true",
		"good-patch": "5 generation patch false true", "good-single-patch": "1 generation patch false true",
		"bad-fix": "5 none update true false", "bad-fix-single": "1 none update true false",
		"bad": "1 none object true false", "bad-concurrent": "5 none object true false",
		"uncached-read":        "5 generation update false true api false 0 false false namespace",
		"list-in-reconcile":    "5 generation update false true cache true 0 false false namespace",
		"requeue-after":        "5 generation update false true cache false 1000 false false namespace",
		"unconditional-status": "5 none update false true cache false 0 false false namespace",
		"conditional-status":   "5 none update false true cache false 0 true false namespace",
		"finalizer":            "5 generation update false true cache false 0 false true namespace",
		"cache-cluster-wide":   "5 generation update false true cache false 0 false false cluster",
		"metadata-only":        "5 generation update false true cache false 0 false false metadata",
		"leader-election":      "5 generation update false true", "no-leader-election": "5 generation update false true",
	}
	// The fleet presets: two replicas, with and without election; every other runs one.
	fleet := map[string]string{"leader-election": "2 true", "no-leader-election": "2 false"}
	if len(presets.Presets) != len(table) {
		t.Errorf("%d presets, want %d", len(presets.Presets), len(table))
	}
	for name, row := range table {
		p := presets.lookup(name)
		if p == nil {
			t.Errorf("no preset %s", name)
			continue
		}
		got := fmt.Sprintf("%d %s %s %v %v", p.Workers, p.Predicate, p.StatusWrite, p.Annotate, p.ConflictRetry)
		if strings.Count(row, " ") > 4 {
			got = fmt.Sprintf("%d %s %s %v %v %s %v %d %v %v %s", p.Workers, p.Predicate, p.StatusWrite, p.Annotate, p.ConflictRetry,
				p.Read, p.ListInReconcile, p.RequeueAfterMS, p.StatusIfChanged, p.Finalizer, p.Cache)
		} else if p.Read != readCache || p.ListInReconcile || p.RequeueAfterMS != 0 || p.StatusIfChanged || p.Finalizer || p.Cache != cacheNamespace {
			t.Errorf("write-up preset %s: anti-pattern settings are not the defaults: %+v", name, p)
		}
		if got != row {
			t.Errorf("preset %s = %q, want %q", name, got, row)
		}
		want, ok := fleet[name]
		if !ok {
			want = "1 false"
		}
		if got := fmt.Sprintf("%d %v", p.Replicas, p.LeaderElect); got != want {
			t.Errorf("preset %s: replicas and leader_elect = %q, want %q", name, got, want)
		}
		if o, err := parseFlags([]string{"--namespace", "x", "--preset", name}); err != nil || o.LeaderElect != p.LeaderElect {
			t.Errorf("--preset %s: LeaderElect = %v (err %v), want the preset's %v", name, o != nil && o.LeaderElect, err, p.LeaderElect)
		}
		if p.Description == "" || !strings.HasSuffix(p.Description, ".") {
			t.Errorf("preset %s: description %q is not a sentence", name, p.Description)
		}
	}
	if d := presets.Defaults; d.ClientBurst != 10 || d.WorkMS != 10 || d.MetricsBindAddress != "127.0.0.1:0" {
		t.Errorf("defaults row: %+v", d)
	}
}

// TestPresetsCopyMatchesDeploy: presets.toml (embedded) must stay a
// byte-identical copy of deploy/presets.toml, the one table (the Rust test
// crates/widget-api/tests/deploy_presets.rs checks the same).
func TestPresetsCopyMatchesDeploy(t *testing.T) {
	deploy, err := os.ReadFile(filepath.Join("..", "..", "deploy", "presets.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(deploy, presetsTOML) {
		t.Fatal("controllers/go/presets.toml drifted from deploy/presets.toml: run `cp deploy/presets.toml controllers/go/presets.toml`")
	}
}

func TestPresetTableIsStrict(t *testing.T) {
	base := string(presetsTOML)
	for name, text := range map[string]string{
		"unknown key":     strings.Replace(base, "workers = 5\n", "workers = 5\nretries = 3\n", 1),
		"missing key":     strings.Replace(base, "conflict_retry = true\n", "", 1),
		"bad predicate":   strings.Replace(base, `predicate = "none"`, `predicate = "always"`, 1),
		"zero workers":    strings.Replace(base, "workers = 1\n", "workers = 0\n", 1),
		"unknown default": strings.Replace(base, `preset = "good"`, `preset = "great"`, 1),
		"duplicate":       strings.Replace(base, `name = "bad-concurrent"`, `name = "bad"`, 1),
		"bad counterpart": strings.Replace(base, `counterpart = "good"`, `counterpart = "great"`, 1),
		"bad question":    strings.Replace(base, `question = "memory"`, `question = "speed"`, 1),
	} {
		if text == base {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		if _, err := parsePresetTable([]byte(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRateLimitRule(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		mode  string
		qps   float64
		burst int
	}{
		{nil, rateLibraryDefault, 0, 0},
		{[]string{"--client-qps", "5"}, rateTokenBucket, 5, 10},
		{[]string{"--client-qps", "20", "--client-burst", "30"}, rateTokenBucket, 20, 30},
		{[]string{"--client-qps", "0"}, rateUnlimited, 0, 0},
		{[]string{"--client-qps", "-1"}, rateUnlimited, -1, 0},
	} {
		o, err := parseFlags(append([]string{"--namespace", "ns"}, tc.args...))
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		s, err := settingsOf(o)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if s.ClientRateLimit != tc.mode {
			t.Errorf("%q: mode %s, want %s", tc.args, s.ClientRateLimit, tc.mode)
		}
		if tc.mode == rateTokenBucket && (s.ClientQPS == nil || *s.ClientQPS != tc.qps || s.ClientBurst == nil || *s.ClientBurst != tc.burst) {
			t.Errorf("%q: bucket %v/%v, want %v/%v", tc.args, s.ClientQPS, s.ClientBurst, tc.qps, tc.burst)
		}
		if tc.mode != rateTokenBucket && (s.ClientQPS != nil || s.ClientBurst != nil) {
			t.Errorf("%q: qps/burst reported without a token bucket", tc.args)
		}
	}
}

// TestPrintSettings runs the program with no kubeconfig at all.
func TestPrintSettings(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--namespace", "x", "--preset", "bad-fix", "--annotate=false",
		"--client-qps", "5", "--print-settings")
	cmd.Env = append(os.Environ(), childEnv+"=1", "KUBECONFIG=/nonexistent")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v (stderr %q)", err, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q", stderr.String())
	}
	want := `{"namespace":"x","preset":"bad-fix","workers":5,"predicate":"none","status_write":"update","annotate":false,` +
		`"conflict_retry":false,"read":"cache","list_in_reconcile":false,"requeue_after_ms":0,"status_if_changed":false,` +
		`"finalizer":false,"cache":"namespace","work_ms":10,"client_rate_limit":"token-bucket","client_qps":5,"client_burst":10,` +
		`"metrics_bind_address":"127.0.0.1:0","log_level":"debug","log_format":"console","watch_list":false,"strip_managed_fields":false,` +
		`"queue":null,"priority_queue":null,"debounce_ms":0,"effective_client_qps":5,"effective_client_burst":10,` +
		`"client_buckets":["informer","client","api-reader"],"retry_backoff_base_ms":5,"retry_backoff_cap_s":1000,` +
		`"retry_overall_qps":10,"retry_overall_burst":100,"leader_election":null}` + "\n"
	if stdout.String() != want {
		t.Errorf("got  %s\nwant %s", stdout.String(), want)
	}
}

// TestPrintSettingsLeaderElection: --leader-elect prints controller-runtime's
// durations as the manager is given them.
func TestPrintSettingsLeaderElection(t *testing.T) {
	o, err := parseFlags([]string{"--namespace", "x", "--leader-elect"})
	if err != nil {
		t.Fatal(err)
	}
	line, err := settingsJSON(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `"leader_election":{"lease_name":"widget-controller-leader","lease_duration_s":15,"renew_deadline_s":10,"retry_period_s":2}`
	if !strings.Contains(line, want) {
		t.Errorf("got %s\nwant it to contain %s", line, want)
	}
}

func TestParseFlagsOverrides(t *testing.T) {
	o, err := parseFlags([]string{"--namespace=ns", "--preset", "bad", "--workers", "3", "--predicate", "generation",
		"--status-write", "patch", "--annotate=false", "--work-ms", "0", "--client-qps", "0", "--watch-list",
		"--metrics-bind-address", "127.0.0.1:9090", "--log-level", "error", "--log-format", "json", "--conflict-reread", "cache"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Workers != 3 || !o.Predicate || o.StatusWrite != writePatch || o.Annotate || o.WorkMS != 0 ||
		!o.ClientQPSSet || o.ClientQPS != 0 || o.WatchList == nil || !*o.WatchList ||
		o.MetricsBindAddress != "127.0.0.1:9090" || o.LogLevel != "error" || o.LogFormat != "json" || o.ConflictReread != "cache" {
		t.Errorf("overrides not applied: %+v", o)
	}
	o, err = parseFlags([]string{"--namespace", "ns", "--preset", "good-single", "--annotate", "--predicate", "none",
		"--client-qps", "50", "--client-burst", "100", "--watch-list=false", "--metrics-bind-address", "0"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Annotate || o.Predicate || o.ClientQPS != 50 || o.ClientBurst != 100 || !o.ClientBurstSet ||
		o.WatchList == nil || *o.WatchList || o.MetricsBindAddress != "0" {
		t.Errorf("overrides not applied: %+v", o)
	}
	if _, err := parseFlags([]string{"-h"}); !errors.Is(err, errHelp) {
		t.Errorf("-h: got %v, want errHelp", err)
	}
}

// invalidFlags: each must fail, naming the flag.
var invalidFlags = []struct {
	args []string
	flag string
}{
	{[]string{}, "--namespace"},
	{[]string{"--preset", "good"}, "--namespace"},
	{[]string{"--namespace"}, "--namespace"},
	{[]string{"--namespace", "ns", "--preset", "nope"}, "--preset"},
	{[]string{"--namespace", "ns", "--workers", "0"}, "--workers"},
	{[]string{"--namespace", "ns", "--workers", "five"}, "--workers"},
	{[]string{"--namespace", "ns", "--predicate", "always"}, "--predicate"},
	{[]string{"--namespace", "ns", "--status-write", "put"}, "--status-write"},
	{[]string{"--namespace", "ns", "--annotate=maybe"}, "--annotate"},
	{[]string{"--namespace", "ns", "--work-ms", "-1"}, "--work-ms"},
	{[]string{"--namespace", "ns", "--client-qps", "fast"}, "--client-qps"},
	{[]string{"--namespace", "ns", "--client-qps", "NaN"}, "--client-qps"},
	{[]string{"--namespace", "ns", "--client-burst", "0"}, "--client-burst"},
	{[]string{"--namespace", "ns", "--client-burst", "5"}, "--client-burst"},
	{[]string{"--namespace", "ns", "--client-qps", "-1", "--client-burst", "5"}, "--client-burst"},
	{[]string{"--namespace", "ns", "--client-qps", "5", "--client-burst", "0"}, "--client-burst"},
	{[]string{"--namespace", "ns", "--workers", "70000"}, "--workers"},
	{[]string{"--namespace", "ns", "--metrics-bind-address", "127.0.0.1:+80"}, "--metrics-bind-address"},
	{[]string{"--namespace", "ns", "--metrics-bind-address", "localhost"}, "--metrics-bind-address"},
	{[]string{"--namespace", "ns", "--metrics-bind-address", "127.0.0.1:99999"}, "--metrics-bind-address"},
	{[]string{"--namespace", "ns", "--log-level", "trace"}, "--log-level"},
	{[]string{"--namespace", "ns", "--log-format", "xml"}, "--log-format"},
	{[]string{"--namespace", "ns", "--conflict-reread", "etcd"}, "--conflict-reread"},
	{[]string{"--namespace", "ns", "--bogus"}, "--bogus"},
	{[]string{"--namespace", "ns", "extra"}, "extra"},
}

func TestParseFlagsInvalid(t *testing.T) {
	for _, tc := range invalidFlags {
		_, err := parseFlags(tc.args)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: got %v, want a usage error", tc.args, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%q: message %q does not name %s", tc.args, err, tc.flag)
		}
	}
}

// TestInvalidFlagsExit2 runs the program itself: exit code 2 and one stderr line.
func TestInvalidFlagsExit2(t *testing.T) {
	// The first six, plus a burst without a token bucket (a parse-time rule
	// in both builds and in the Rust controller).
	cases := append(invalidFlags[:6:6], invalidFlags[13])
	for _, tc := range cases {
		cmd := childCommand(tc.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%q: got %v, want exit status 2 (stderr %q)", tc.args, err, stderr.String())
			continue
		}
		msg := strings.TrimRight(stderr.String(), "\n")
		if strings.Contains(msg, "\n") || !strings.Contains(msg, tc.flag) {
			t.Errorf("%q: stderr %q, want one line naming %s", tc.args, stderr.String(), tc.flag)
		}
		if stdout.Len() != 0 {
			t.Errorf("%q: unexpected stdout %q", tc.args, stdout.String())
		}
	}
}

func TestParseText(t *testing.T) {
	pg, err := parseText("# HELP x y\nx_total{code=\"200\",host=\"127.0.0.1:1\",method=\"PUT\"} 3\nx_total{code=\"409\",method=\"PUT\",q=\"a\\\"b\"} 2\nup 1.5e+00\n")
	if err != nil {
		t.Fatal(err)
	}
	if pg.sum("x_total") != 5 || pg.sum("x_total", "code", "409") != 2 || pg.sum("up") != 1.5 || !pg.has("x_total", "q", `a"b`) {
		t.Errorf("parsed %+v", pg)
	}
}

// TestRetryPolicyIsTheLibraryDefault checks the printed retry policy against
// client-go's default controller rate limiter, the one controller-runtime
// uses when a controller sets none.
func TestRetryPolicyIsTheLibraryDefault(t *testing.T) {
	rl := workqueue.DefaultControllerRateLimiter()
	base := time.Duration(retryBackoffBaseMS) * time.Millisecond
	if d := rl.When("a"); d != base {
		t.Errorf("first retry after %v, want %v", d, base)
	}
	if d := rl.When("a"); d != 2*base {
		t.Errorf("second retry after %v, want %v", d, 2*base)
	}
	var last time.Duration
	for i := 0; i < 40; i++ {
		last = rl.When("capped")
	}
	if want := time.Duration(retryBackoffCapS) * time.Second; last != want {
		t.Errorf("backoff capped at %v, want %v", last, want)
	}
	// The overall bucket: after its burst (the calls above took 42 tokens),
	// a new item waits for a refill at retryOverallQPS.
	rl = workqueue.DefaultControllerRateLimiter()
	for i := 0; i < retryOverallBurst; i++ {
		if d := rl.When(i); d > base {
			t.Fatalf("item %d within the burst waited %v", i, d)
		}
	}
	d := rl.When("one-more")
	if want := time.Second / retryOverallQPS; d < want*9/10 || d > want*11/10 {
		t.Errorf("item after the burst waited %v, want about %v", d, want)
	}
}

// TestEffectiveClientLimit: with no --client-qps, the limit is the library's
// default — controller-runtime v0.18's GetConfig sets 20 QPS / 30 burst,
// from v0.21 it disables the client-side limiter (QPS -1).
func TestEffectiveClientLimit(t *testing.T) {
	version := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "sigs.k8s.io/controller-runtime" {
				version = m.Version
			}
		}
	}
	o, err := parseFlags([]string{"--namespace", "ns"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := settingsOf(o)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasPrefix(version, "v0.18."):
		if s.EffectiveClientQPS == nil || *s.EffectiveClientQPS != 20 || *s.EffectiveClientBurst != 30 {
			t.Errorf("%s: effective %v/%v, want 20/30", version, s.EffectiveClientQPS, s.EffectiveClientBurst)
		}
	case strings.HasPrefix(version, "v0.22."), strings.HasPrefix(version, "v0.25."):
		if s.EffectiveClientQPS != nil || s.EffectiveClientBurst != nil {
			t.Errorf("%s: effective %v/%v, want no limiter", version, *s.EffectiveClientQPS, *s.EffectiveClientBurst)
		}
	default:
		t.Fatalf("no expectation for controller-runtime %q", version)
	}
	o, _ = parseFlags([]string{"--namespace", "ns", "--client-qps", "7"})
	if s, _ = settingsOf(o); s.EffectiveClientQPS == nil || *s.EffectiveClientQPS != 7 || *s.EffectiveClientBurst != 10 {
		t.Errorf("--client-qps 7: effective %v/%v, want 7/10", s.EffectiveClientQPS, s.EffectiveClientBurst)
	}
	o, _ = parseFlags([]string{"--namespace", "ns", "--client-qps", "-1"})
	if s, _ = settingsOf(o); s.EffectiveClientQPS != nil {
		t.Errorf("--client-qps -1: effective %v, want no limiter", *s.EffectiveClientQPS)
	}
	if _, err := parseFlags([]string{"--namespace", "ns", "--queue", "kube"}); err == nil || !strings.Contains(err.Error(), "--queue") {
		t.Errorf("--queue kube: %v", err)
	}
}

// usesPriorityQueue says whether a controller started with args runs
// controller-runtime's priority queue: --priority-queue if given, else the
// build's default (on from v0.23, off before).
// loopedWidget waits until the looping presets have made every widget Ready
// (client-go's FIFO queue reaches all while the loop goes on) or, with
// controller-runtime's priority queue, which serves the looping keys
// (updates) ahead of the initial list's and may never reach some widgets,
// until one is Ready; it returns a Ready widget to watch the loop on.
func loopedWidget(t *testing.T, ns string, prio bool) string {
	t.Helper()
	if !prio {
		waitFor(t, 30*time.Second, "all widgets Ready", func() (bool, string) {
			n := readyCount(t, ns)
			return n == numWidgets, fmt.Sprintf("%d/%d Ready", n, numWidgets)
		})
		return "widget-000001"
	}
	looped := ""
	waitFor(t, 30*time.Second, "some widget Ready", func() (bool, string) {
		for _, w := range listWidgets(t, ns) {
			if w.Status != nil && w.Status.Phase == "Ready" {
				looped = w.Name
				return true, ""
			}
		}
		return false, "none Ready"
	})
	return looped
}

func usesPriorityQueue(crVersion string, args []string) bool {
	for _, a := range args {
		switch a {
		case "--priority-queue", "--priority-queue=true":
			return true
		case "--priority-queue=false":
			return false
		}
	}
	var minor int
	fmt.Sscanf(crVersion, "v0.%d.", &minor)
	return minor >= 23
}

// TestPriorityQueueFlag: --priority-queue exists from controller-runtime
// v0.20 on (the v0.22 and v0.25 builds); v0.18.4 rejects it. Given, it sets
// controller.Options.UsePriorityQueue and is printed; with it on, the retry
// policy is the per-item backoff alone (no overall bucket).
func TestPriorityQueueFlag(t *testing.T) {
	version := controllerRuntimeVersion()
	want := !strings.HasPrefix(version, "v0.18.")
	if hasPriorityQueue() != want {
		t.Fatalf("controller-runtime %s: hasPriorityQueue() = %v, want %v", version, hasPriorityQueue(), want)
	}
	o, err := parseFlags([]string{"--namespace", "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := settingsOf(o); s.PriorityQueue != nil || s.RetryOverallQPS == nil || *s.RetryOverallQPS != retryOverallQPS {
		t.Errorf("no flag: priority_queue %v, retry_overall_qps %v; want null and %d", s.PriorityQueue, s.RetryOverallQPS, retryOverallQPS)
	}
	_, err = parseFlags([]string{"--namespace", "ns", "--priority-queue"})
	if !want {
		if err == nil || !strings.Contains(err.Error(), "--priority-queue") {
			t.Errorf("controller-runtime %s: --priority-queue gave %v, want a usage error naming the flag", version, err)
		}
		var copts controller.Options
		on := true
		if setPriorityQueue(&copts, &on) == nil {
			t.Errorf("setPriorityQueue succeeded on a build without a priority queue")
		}
		return
	}
	for _, on := range []bool{true, false} {
		o, err := parseFlags([]string{"--namespace", "ns", fmt.Sprintf("--priority-queue=%v", on)})
		if err != nil {
			t.Fatal(err)
		}
		if o.PriorityQueue == nil || *o.PriorityQueue != on {
			t.Fatalf("--priority-queue=%v parsed as %v", on, o.PriorityQueue)
		}
		var copts controller.Options
		if err := setPriorityQueue(&copts, o.PriorityQueue); err != nil {
			t.Fatal(err)
		}
		got := reflect.ValueOf(copts).FieldByName(priorityQueueField).Interface().(*bool)
		if got == nil || *got != on {
			t.Errorf("UsePriorityQueue = %v, want %v", got, on)
		}
		s, _ := settingsOf(o)
		if s.PriorityQueue == nil || *s.PriorityQueue != on {
			t.Errorf("settings priority_queue %v, want %v", s.PriorityQueue, on)
		}
		if (s.RetryOverallQPS == nil) != on || (s.RetryOverallBurst == nil) != on {
			t.Errorf("--priority-queue=%v: retry overall bucket %v/%v", on, s.RetryOverallQPS, s.RetryOverallBurst)
		}
	}
}
