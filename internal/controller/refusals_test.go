package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// call is one list or watch an informer makes, and the API server's answer.
type call struct {
	watch bool
	err   error
}

func TestRefusals_UnreadyFromARefusalUntilAWatchStarts(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "", errors.New("no"))
	unauthorized := apierrors.NewUnauthorized("expired")
	down := errors.New("connection refused")
	tests := []struct {
		name    string
		calls   []call
		unready bool
		logged  int
	}{
		{"a list and a watch", []call{{false, nil}, {true, nil}}, false, 0},
		{"a refused watch", []call{{true, forbidden}}, true, 1},
		{"a refused list", []call{{false, unauthorized}}, true, 1},
		{"refused on every retry, logged once", []call{{true, forbidden}, {false, forbidden}, {true, forbidden}}, true, 1},
		{"a refused watch, then a list that succeeds", []call{{true, forbidden}, {false, nil}}, true, 1},
		{"a refused watch, then a watch that starts", []call{{true, forbidden}, {false, nil}, {true, nil}}, false, 2},
		{"an API server away", []call{{false, down}, {true, down}}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logged := 0
			r := NewRefusals(funcr.New(func(string, string) { logged++ }, funcr.Options{}))
			var answer error
			lw := r.ListWatch(&toolscache.ListWatch{
				ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
					return &corev1.ConfigMapList{}, answer
				},
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
					if answer != nil {
						return nil, answer
					}
					return watch.NewEmptyWatch(), nil
				},
			})
			for _, c := range tt.calls {
				answer = c.err
				if c.watch {
					_, _ = lw.WatchWithContext(context.Background(), metav1.ListOptions{})
				} else {
					_, _ = lw.ListWithContext(context.Background(), metav1.ListOptions{})
				}
			}
			if err := r.Check(nil); (err != nil) != tt.unready {
				t.Errorf("Check() = %v, want unready %v", err, tt.unready)
			}
			if logged != tt.logged {
				t.Errorf("logged %d lines, want %d", logged, tt.logged)
			}
		})
	}
}
