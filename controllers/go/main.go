// Command widget-controller is ctrlbench's controller-runtime reference
// controller: one program, eight presets (docs/architecture.md#controller-presets-and-flags), built against two
// controller-runtime versions from the same sources (see README.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"go.uber.org/zap/zapcore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

const controllerName = "widget"

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// realMain runs the controller until SIGTERM/SIGINT and returns the exit
// code: 0 after a clean shutdown, 2 for bad flags, 1 for any other failure.
func realMain(args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage())
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "widget-controller: %v\n", err)
		return 2
	}
	if opts.PrintSettings {
		line, err := settingsJSON(opts)
		if err != nil {
			fmt.Fprintf(stderr, "widget-controller: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, line)
		return 0
	}
	if err := setWatchList(opts.WatchList); err != nil {
		fmt.Fprintf(stderr, "widget-controller: --watch-list: %v\n", err)
		return 1
	}
	logger := zap.New(zapOptions(opts, stderr)...)
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	installClientMetrics()

	if err := run(ctrl.SetupSignalHandler(), opts, stdout); err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "widget-controller: %v\n", err)
			return 2
		}
		fmt.Fprintf(stderr, "widget-controller: %v\n", err)
		return 1
	}
	return 0
}

// setWatchList turns client-go's streaming initial list on or off (nil: leave
// the environment as inherited). client-go reads these variables the first
// time a reflector or feature gate is used; this runs before any client
// exists. client-go >= 0.31 (the v0.22 build) reads the WatchListClient
// feature gate from KUBE_FEATURE_WatchListClient; client-go 0.30 (the v0.18.4
// build) defines the gate but its reflector only looks at
// ENABLE_CLIENT_GO_WATCH_LIST_ALPHA, so both are set.
func setWatchList(on *bool) error {
	if on == nil {
		return nil
	}
	if err := os.Setenv("KUBE_FEATURE_WatchListClient", strconv.FormatBool(*on)); err != nil {
		return err
	}
	if *on {
		return os.Setenv("ENABLE_CLIENT_GO_WATCH_LIST_ALPHA", "true")
	}
	return os.Unsetenv("ENABLE_CLIENT_GO_WATCH_LIST_ALPHA")
}

func zapOptions(o *options, w io.Writer) []zap.Opts {
	level := map[string]zapcore.Level{
		"debug": zapcore.DebugLevel,
		"info":  zapcore.InfoLevel,
		"error": zapcore.ErrorLevel,
	}[o.LogLevel]
	opts := []zap.Opts{zap.WriteTo(w), zap.Level(level)}
	if o.LogFormat == "json" {
		opts = append(opts, zap.UseDevMode(false), zap.JSONEncoder())
	} else {
		// The write-up's logger: zap's development config (console encoder).
		opts = append(opts, zap.UseDevMode(true), zap.ConsoleEncoder())
	}
	return opts
}

// restConfig loads the kubeconfig the library's usual way (which also sets
// the library's client rate-limit defaults) and applies the QPS/burst flags.
func restConfig(o *options) (*rest.Config, error) {
	if o.Kubeconfig != "" {
		if err := os.Setenv("KUBECONFIG", o.Kubeconfig); err != nil {
			return nil, err
		}
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	switch o.rateLimit() {
	case rateUnlimited:
		cfg.QPS = -1 // client-go: no client-side limiter
	case rateTokenBucket:
		cfg.QPS, cfg.Burst = float32(o.ClientQPS), o.ClientBurst
	}
	cfg.UserAgent = "widget-controller/" + o.Preset
	return cfg, nil
}

// run builds the manager and the "widget" controller and runs both until ctx ends.
func run(ctx context.Context, o *options, stdout io.Writer) error {
	log := ctrl.Log.WithName("setup")
	cfg, err := restConfig(o)
	if err != nil {
		return err
	}
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	cacheOpts := cache.Options{
		DefaultNamespaces: map[string]cache.Config{o.Namespace: {}},
	}
	if o.Cache == cacheCluster {
		// Every namespace's widgets are listed, watched and cached (needs
		// cluster-wide list/watch); only ours are reconciled (below).
		cacheOpts = cache.Options{}
	}
	if o.StripManagedFields {
		// managedFields are never read here: dropped, the cache holds less.
		cacheOpts.DefaultTransform = cache.TransformStripManagedFields()
	}
	mopts := ctrl.Options{
		Scheme: scheme,
		Cache:  cacheOpts,
		// /metrics is served by startMetricsServer from the same registry.
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	}
	if o.LeaderElect {
		// The library's durations are the defaults; they are set anyway so
		// that what --print-settings says is what runs.
		lease, renew, retry := leaseDurationS*time.Second, leaseRenewDeadlineS*time.Second, leaseRetryPeriodS*time.Second
		mopts.LeaderElection = true
		mopts.LeaderElectionID = leaseName
		mopts.LeaderElectionNamespace = o.Namespace
		mopts.LeaseDuration, mopts.RenewDeadline, mopts.RetryPeriod = &lease, &renew, &retry
	}
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}

	r := &widgetReconciler{
		client:    mgr.GetClient(),
		apiReader: mgr.GetAPIReader(),
		opts:      o,
		work:      time.Duration(o.WorkMS) * time.Millisecond,
		now:       time.Now,
	}
	copts := controller.Options{MaxConcurrentReconciles: o.Workers}
	if err := setPriorityQueue(&copts, o.PriorityQueue); err != nil {
		return &usageError{msg: "--priority-queue: " + err.Error()}
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(controllerName).
		WithOptions(copts)
	// One WithPredicates: a second one replaces the first (all must pass).
	var preds []predicate.Predicate
	if o.Predicate {
		preds = append(preds, predicate.GenerationChangedPredicate{})
	}
	if o.Cache == cacheCluster {
		preds = append(preds, predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return obj.GetNamespace() == o.Namespace
		}))
	}
	var forOpts []builder.ForOption
	if len(preds) > 0 {
		forOpts = append(forOpts, builder.WithPredicates(preds...))
	}
	if o.Cache == cacheMetadata {
		// The informer caches PartialObjectMetadata; reconcile reads the
		// object through the API reader.
		forOpts = append(forOpts, builder.OnlyMetadata)
	}
	b = b.For(&Widget{}, forOpts...)
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("creating controller: %w", err)
	}
	// The informer the controller's source uses (the same object type, so
	// the cache hands out the same one): its HasSynced marks the end of the
	// initial list.
	var watched client.Object = &Widget{}
	if o.Cache == cacheMetadata {
		pm := &metav1.PartialObjectMetadata{}
		pm.SetGroupVersionKind(groupVersion.WithKind("Widget"))
		watched = pm
	}
	informer, err := mgr.GetCache().GetInformer(ctx, watched)
	if err != nil {
		return fmt.Errorf("getting the widget informer: %w", err)
	}
	initialList.Set(0)

	log.Info("starting", "namespace", o.Namespace, "preset", o.Preset, "workers", o.Workers,
		"predicate", o.Predicate, "statusWrite", o.StatusWrite, "annotate", o.Annotate,
		"conflictRetry", o.ConflictRetry, "conflictReread", o.ConflictReread, "workMs", o.WorkMS,
		"read", o.Read, "listInReconcile", o.ListInReconcile, "requeueAfterMs", o.RequeueAfterMS,
		"statusIfChanged", o.StatusIfChanged, "finalizer", o.Finalizer, "cache", o.Cache,
		"priorityQueue", o.PriorityQueue, "qps", cfg.QPS, "burst", cfg.Burst, "watchList", os.Getenv("KUBE_FEATURE_WatchListClient"))

	var ms *metricsServer
	if o.MetricsBindAddress != "0" {
		ms, err = startMetricsServer(o.MetricsBindAddress, o.Pprof, stdout)
		if err != nil {
			return err
		}
		defer ms.Shutdown()
	}

	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	go func() {
		for !informer.HasSynced() {
			select {
			case <-mctx.Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		initialList.Set(time.Since(processStart).Seconds())
	}()
	var serveErr <-chan error
	if ms != nil {
		serveErr = ms.Errors()
	}
	select {
	case err := <-done:
		return err
	case err := <-serveErr:
		cancel()
		<-done
		return fmt.Errorf("metrics server: %w", err)
	}
}
