// The reconcile of every preset: simulated work, then the status write the
// preset asks for (update with optional RetryOnConflict, merge patch, apply,
// or an object update whose status the server drops), and the annotation stamp.

package main

import (
	"context"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// conflictBackoff is the good presets' RetryOnConflict schedule: 5 attempts,
// 10 ms apart.
var conflictBackoff = wait.Backoff{Steps: 5, Duration: 10 * time.Millisecond, Factor: 1.0}

// widgetReconciler implements one preset (see docs/architecture.md#controller-presets-and-flags). Requeues happen only
// through returned errors, so controller-runtime's default per-item
// exponential rate limiter decides when to retry.
type widgetReconciler struct {
	client    client.Client // reads from the namespace-restricted cache
	apiReader client.Reader // reads straight from the API server
	opts      *options
	work      time.Duration
	now       func() time.Time
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)

	// read = "api", or a metadata-only cache (which has no spec): the
	// object comes from a GET through the API reader.
	var reader client.Reader = r.client
	if r.opts.Read == readAPI || r.opts.Cache == cacheMetadata {
		reader = r.apiReader
	}
	w := &Widget{}
	if err := reader.Get(ctx, req.NamespacedName, w); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if w.DeletionTimestamp != nil {
		if r.opts.Finalizer && controllerutil.ContainsFinalizer(w, finalizerName) {
			controllerutil.RemoveFinalizer(w, finalizerName)
			if err := r.client.Update(ctx, w); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, nil
	}
	if r.opts.ListInReconcile {
		if err := r.apiReader.List(ctx, &WidgetList{}, client.InNamespace(req.Namespace)); err != nil {
			return ctrl.Result{}, err
		}
	}

	if r.work > 0 {
		t := time.NewTimer(r.work)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctrl.Result{}, nil // shutting down
		}
	}

	if r.opts.Finalizer && !controllerutil.ContainsFinalizer(w, finalizerName) {
		controllerutil.AddFinalizer(w, finalizerName)
		if err := r.client.Update(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
	}

	if r.opts.Annotate && r.opts.StatusWrite != writeObject {
		r.stamp(w)
		if err := r.client.Update(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
	}

	var err error
	switch {
	case r.opts.StatusWrite != writeUpdate && r.opts.StatusWrite != writeObject &&
		r.opts.StatusIfChanged && statusUnchanged(w):
		// status_if_changed: nothing to write.
	case r.opts.StatusWrite == writeUpdate:
		err = r.updateStatus(ctx, req.NamespacedName, w)
	case r.opts.StatusWrite == writePatch:
		base := w.DeepCopy()
		w.Status = r.readyStatus(w)
		err = r.client.Status().Patch(ctx, w, client.MergeFrom(base))
	case r.opts.StatusWrite == writeApply:
		err = r.client.Status().Patch(ctx, r.applyObject(w), client.Apply,
			client.FieldOwner(fieldManager), client.ForceOwnership)
	case r.opts.StatusWrite == writeObject:
		// The write-up's bad controller: one Update of the main resource carrying
		// both the annotation and the status. The API server drops the status
		// (status subresource), so the object never becomes Ready.
		if r.opts.Annotate {
			r.stamp(w)
		}
		w.Status = r.readyStatus(w)
		err = r.client.Update(ctx, w)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	log.V(1).Info("reconciled", "statusWrite", r.opts.StatusWrite, "resourceVersion", w.ResourceVersion)
	return ctrl.Result{RequeueAfter: time.Duration(r.opts.RequeueAfterMS) * time.Millisecond}, nil
}

// statusUnchanged (status_if_changed): the stored status already says what
// readyStatus would write, lastUpdated aside.
func statusUnchanged(w *Widget) bool {
	return w.Status != nil && w.Status.Phase == phaseReady && w.Status.ProcessedCount == w.Spec.Count
}

// updateStatus does PUT .../status, wrapped in RetryOnConflict for the good
// presets. The first attempt uses the object already read; each retry
// re-reads it through the API reader (--conflict-reread=api, fresh) or, as
// the write-up did, every attempt re-reads the cached object (=cache, which may
// still be stale after a conflict).
func (r *widgetReconciler) updateStatus(ctx context.Context, key types.NamespacedName, w *Widget) error {
	if !r.opts.ConflictRetry {
		if r.opts.StatusIfChanged && statusUnchanged(w) {
			return nil
		}
		w.Status = r.readyStatus(w)
		return r.client.Status().Update(ctx, w)
	}
	attempt := 0
	return retry.RetryOnConflict(conflictBackoff, func() error {
		attempt++
		switch {
		case r.opts.ConflictReread == "cache":
			if err := r.client.Get(ctx, key, w); err != nil {
				return err
			}
		case attempt > 1:
			if err := r.apiReader.Get(ctx, key, w); err != nil {
				return err
			}
		}
		if r.opts.StatusIfChanged && statusUnchanged(w) {
			return nil
		}
		w.Status = r.readyStatus(w)
		return r.client.Status().Update(ctx, w)
	})
}

func (r *widgetReconciler) readyStatus(w *Widget) *WidgetStatus {
	return &WidgetStatus{
		Phase:          phaseReady,
		ProcessedCount: w.Spec.Count,
		LastUpdated:    r.now().UTC().Format(time.RFC3339),
	}
}

func (r *widgetReconciler) stamp(w *Widget) {
	a := w.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[lastSeenAnnotation] = strconv.FormatInt(r.now().UnixNano(), 10)
	w.SetAnnotations(a)
}

// applyObject is the server-side apply body: identity plus the status fields
// this controller owns, nothing else (no spec, no resourceVersion).
func (r *widgetReconciler) applyObject(w *Widget) *unstructured.Unstructured {
	s := r.readyStatus(w)
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"status": map[string]interface{}{
			"phase":          s.Phase,
			"processedCount": s.ProcessedCount,
			"lastUpdated":    s.LastUpdated,
		},
	}}
	u.SetAPIVersion(groupVersion.String())
	u.SetKind(widgetKind)
	u.SetNamespace(w.Namespace)
	u.SetName(w.Name)
	return u
}
