// The Widget types (docs/architecture.md#the-widget-api) written by hand with their DeepCopy methods,
// so the Go controller needs no code generator.

package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// The Widget custom resource (deploy/crd.yaml), written by hand: no code
// generation, so the deep-copy functions below are hand-written too.

// groupVersion is the API group and version of the Widget CRD.
var groupVersion = schema.GroupVersion{Group: "benchmark.example.com", Version: "v1alpha1"}

const (
	widgetKind = "Widget"
	// lastSeenAnnotation is stamped by the annotating (bad) presets.
	lastSeenAnnotation = "bad-controller/last-seen"
	// phaseReady is the status.phase value that means "Ready".
	phaseReady = "Ready"
	// fieldManager names this controller in server-side apply and managedFields.
	fieldManager = "widget-controller"
)

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	Count   int64  `json:"count"`
	Message string `json:"message,omitempty"`
}

// WidgetStatus is the observed state, written through the status subresource.
type WidgetStatus struct {
	Phase          string `json:"phase,omitempty"`
	ProcessedCount int64  `json:"processedCount,omitempty"`
	LastUpdated    string `json:"lastUpdated,omitempty"`
}

// Widget is one benchmark object.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec    `json:"spec"`
	Status *WidgetStatus `json:"status,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Widget `json:"items"`
}

// DeepCopyInto copies the receiver into out.
func (in *Widget) DeepCopyInto(out *Widget) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = in.Spec
	if in.Status != nil {
		s := *in.Status
		out.Status = &s
	}
}

// DeepCopy returns a deep copy of the receiver.
func (in *Widget) DeepCopy() *Widget {
	if in == nil {
		return nil
	}
	out := new(Widget)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *Widget) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the receiver into out.
func (in *WidgetList) DeepCopyInto(out *WidgetList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Widget, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a deep copy of the receiver.
func (in *WidgetList) DeepCopy() *WidgetList {
	if in == nil {
		return nil
	}
	out := new(WidgetList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *WidgetList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// newScheme returns a scheme that knows the built-in Kubernetes types and Widget.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	s.AddKnownTypes(groupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, groupVersion)
	return s, nil
}
