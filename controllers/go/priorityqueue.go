// controller-runtime's priority queue (controller.Options.UsePriorityQueue):
// opt-in in v0.20–v0.22, on by default from v0.23, absent before v0.20. The
// v0.18.4 build lacks the field, so it is reached through reflection: one
// source set builds against every controller-runtime version, no build tags.

package main

import (
	"fmt"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/controller"
)

const priorityQueueField = "UsePriorityQueue"

// hasPriorityQueue says whether this build's controller-runtime has one.
func hasPriorityQueue() bool {
	_, ok := reflect.TypeOf(controller.Options{}).FieldByName(priorityQueueField)
	return ok
}

// setPriorityQueue sets UsePriorityQueue to on; nil leaves the runtime's
// default (off in v0.22, on in v0.25).
func setPriorityQueue(o *controller.Options, on *bool) error {
	if on == nil {
		return nil
	}
	f := reflect.ValueOf(o).Elem().FieldByName(priorityQueueField)
	if !f.IsValid() || f.Type() != reflect.TypeOf(on) {
		return fmt.Errorf("controller-runtime in this build has no priority queue (%s)", priorityQueueField)
	}
	v := *on
	f.Set(reflect.ValueOf(&v))
	return nil
}
