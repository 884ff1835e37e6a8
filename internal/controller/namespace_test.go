package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ripple-controller/ripple/internal/options"
)

func TestNamespaceSelected(t *testing.T) {
	team := labels.SelectorFromSet(labels.Set{"team": "a"})
	cached := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "selected", Labels: map[string]string{"team": "a"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{"team": "b"}}},
	).Build()
	cases := []struct {
		name      string
		opts      options.Options
		namespace string
		want      bool
		wantErr   bool
	}{
		{name: "every namespace without a selector", namespace: "uncached", want: true},
		{name: "an ignored namespace is not", opts: options.Options{NamespacesToIgnore: []string{"selected"}}, namespace: "selected"},
		{name: "a namespace whose labels match", opts: options.Options{NamespaceSelector: team}, namespace: "selected", want: true},
		{name: "a namespace whose labels do not match", opts: options.Options{NamespaceSelector: team}, namespace: "other"},
		{name: "a namespace not cached yet is retried, not passed by", opts: options.Options{NamespaceSelector: team},
			namespace: "uncached", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Reconciler{Client: cached, Opts: &c.opts}
			got, err := r.namespaceSelected(context.Background(), c.namespace)
			if (err != nil) != c.wantErr {
				t.Fatalf("namespaceSelected(%s) error = %v, want one: %v", c.namespace, err, c.wantErr)
			}
			if got != c.want {
				t.Errorf("namespaceSelected(%s) = %v, want %v", c.namespace, got, c.want)
			}
		})
	}
}
