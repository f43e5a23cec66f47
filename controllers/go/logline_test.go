// What the per-reconcile debug line costs the Go controller: CPU per line,
// with the controller's own zap options (zapOptions) writing to a file as the
// harness's controller.log is, and the values controller-runtime's reconcile
// logger carries. The Rust line is timed by
// crates/widget-controller/examples/log_line.rs. Run without the API server:
//
//	go test -run '^$' -bench ReconcileLogLine -benchtime 200000x -count 5

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func benchmarkLogLine(b *testing.B, level string) {
	f, err := os.Create(filepath.Join(b.TempDir(), "controller.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	logger := zap.New(zapOptions(&options{LogLevel: level, LogFormat: "console"}, f)...)
	// controller-runtime builds these once per reconcile, at any level
	// (its log constructor and reconcileHandler); the line itself is what
	// the level decides.
	ns, name := "cb-go-good-single-n3000-r1-1a2b", "widget-000042"
	log := logger.WithValues("controller", controllerName, "controllerGroup", "benchmark.example.com",
		"controllerKind", "Widget").WithValues("Widget", klog.KRef(ns, name), "namespace", ns, "name", name,
		"reconcileID", "5f0c2a8e-3b1d-4c6e-9a7f-000000000042")
	b.ResetTimer()
	c0 := cpuTime(b)
	for i := 0; i < b.N; i++ {
		log.V(1).Info("reconciled", "statusWrite", "update", "resourceVersion", "104242")
	}
	b.ReportMetric(float64(cpuTime(b)-c0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkReconcileLogLine(b *testing.B) {
	b.Run("debug", func(b *testing.B) { benchmarkLogLine(b, "debug") })
	b.Run("info", func(b *testing.B) { benchmarkLogLine(b, "info") })
}
