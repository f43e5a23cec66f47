// Metrics: controller-runtime's own registry served on a listener we bind
// (so the real port can be printed), plus client-go's rate-limiter and request latency
// histograms, which controller-runtime does not register itself.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// rateLimiterWait is client-go's "time spent in the client-side rate limiter"
// metric. controller-runtime (v0.18 and v0.22 alike) hands client-go only its
// request-result counter, so this program registers the latency histogram
// itself, in controller-runtime's registry, and points client-go's hook at it.
// client-go observes once per request, and only while a limiter is
// configured; with the limiter off the histogram stays at zero but is
// still on the page.
var rateLimiterWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "rest_client_rate_limiter_duration_seconds",
	Help:    "Seconds requests spent waiting in the client-side rate limiter, by verb.",
	Buckets: []float64{0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60},
}, []string{"verb"})

// verbs pre-created so that every series exists before the first request.
var knownVerbs = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// requestDuration is client-go's request latency histogram (after the rate
// limiter), which controller-runtime does not register either; the Rust
// controller exports the same name and buckets.
var requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "rest_client_request_duration_seconds",
	Help:    "Request latency in seconds, by verb.",
	Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60},
}, []string{"verb"})

// processStart is when this process began (package initialisation).
var processStart = time.Now()

// initialList is the start-up figure for a controller that meets many
// existing objects: seconds from process start until the widget informer
// first held the complete list (HasSynced), 0 until then. The Rust
// controller exports the same name (kube-runtime's first InitDone).
var initialList = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "ctrlbench_initial_list_seconds",
	Help: "Seconds from process start until the watch cache first held the complete initial list (0 until then)",
})

type verbLatency struct{ h *prometheus.HistogramVec }

func (r verbLatency) Observe(_ context.Context, verb string, _ url.URL, latency time.Duration) {
	r.h.WithLabelValues(verb).Observe(latency.Seconds())
}

var installOnce sync.Once

// installClientMetrics registers the rate-limiter histogram and wires it into
// client-go. Call before any client is created.
func installClientMetrics() {
	installOnce.Do(func() {
		metrics.Registry.MustRegister(rateLimiterWait, requestDuration, initialList)
		for _, v := range knownVerbs {
			rateLimiterWait.WithLabelValues(v)
			requestDuration.WithLabelValues(v)
		}
		// client-go's metrics.Register only takes effect once and
		// controller-runtime already called it (for the request counter),
		// so set the hook directly.
		clientmetrics.RateLimiterLatency = verbLatency{h: rateLimiterWait}
		clientmetrics.RequestLatency = verbLatency{h: requestDuration}
	})
}

// metricsServer serves controller-runtime's registry (the same handler its own
// metrics server uses) on a listener this program binds itself, so that port 0
// works and the real address is known before anything is scraped.
type metricsServer struct {
	ln  net.Listener
	srv *http.Server
	err chan error
}

// startMetricsServer binds addr, starts serving /metrics and prints the one
// stdout line metrics-address=HOST:PORT.
func startMetricsServer(addr string, pprof bool, stdout io.Writer) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{
		ErrorHandling: promhttp.HTTPErrorOnError,
	}))
	if pprof {
		// The handler controller-runtime's pprof server mounts, on this
		// listener so that the harness needs no second port.
		mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	}
	m := &metricsServer{
		ln:  ln,
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		err: make(chan error, 1),
	}
	go func() {
		err := m.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		m.err <- err
	}()
	if _, err := fmt.Fprintf(stdout, "metrics-address=%s\n", ln.Addr().String()); err != nil {
		_ = m.srv.Close()
		return nil, fmt.Errorf("writing metrics-address line: %w", err)
	}
	return m, nil
}

// Errors returns a channel that receives the serving error, if serving stops.
func (m *metricsServer) Errors() <-chan error { return m.err }

// Shutdown stops the server, letting in-flight scrapes finish.
func (m *metricsServer) Shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.srv.Shutdown(ctx); err != nil {
		_ = m.srv.Close()
	}
}
