package controller

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/workload"
)

// owed holds the workloads a recreation deleted and could not create again
// (the API server refusing the new Job after a dry run admitted it, or
// away): the old object is gone from the API server, so the new one lives
// only here until a later reconcile of its name creates it. A restart of
// ripple in between loses it.
type owed struct {
	mu sync.Mutex
	m  map[types.NamespacedName]workload.Result
}

func newOwed() *owed { return &owed{m: map[types.NamespacedName]workload.Result{}} }

// keep remembers the object res owes, and forgets one owed before when res
// owes none: the workload exists again.
func (o *owed) keep(key types.NamespacedName, res workload.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if res.Owed == nil {
		delete(o.m, key)
		return
	}
	o.m[key] = res
}

func (o *owed) take(key types.NamespacedName) (workload.Result, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	res, ok := o.m[key]
	delete(o.m, key)
	return res, ok
}

// createOwed creates the workload owed under key, if any; it stays owed
// while the API server refuses it, and the error retries the reconcile,
// unless its namespace is gone or going, which nothing can undo.
func (r *Reconciler) createOwed(ctx context.Context, key types.NamespacedName) error {
	res, ok := r.owed.take(key)
	if !ok {
		return nil
	}
	obj, ok := res.Owed.DeepCopyObject().(client.Object)
	if !ok {
		return nil
	}
	err := r.Create(ctx, obj, client.FieldOwner(workload.FieldOwner))
	switch {
	case apierrors.IsAlreadyExists(err):
		// Created since, by ripple or by someone else.
		return nil
	case workload.NamespaceEnding(err):
		logf.FromContext(ctx).Info("Dropping the workload owed: its namespace is being deleted", "error", err.Error())
		return nil
	case err != nil:
		r.owed.keep(key, res)
		return fmt.Errorf("creating %s %s again: %w", r.Type.Kind, key, err)
	}
	r.resumed(ctx, res.Owed, workload.Result{Created: obj, Cause: res.Cause})
	return nil
}
