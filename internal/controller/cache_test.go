package controller

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ripple-controller/ripple/internal/annotations"
)

func TestTrimConfigMetadata_KeepsOnlyWhatRippleReads(t *testing.T) {
	created := metav1.Unix(1700000000, 0)
	deleted := metav1.Unix(1700000100, 0)
	full := func() *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: "app", Namespace: "team", UID: "u-1", ResourceVersion: "42", Generation: 3,
			CreationTimestamp: created, DeletionTimestamp: &deleted,
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				annotations.Ignore: "true",
				annotations.Match:  "true",
				"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"hunter2"}}`,
				"team.example/owner": "web",
			},
			OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
			Finalizers:      []string{"example/finalizer"},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}}
	}
	keptAnnotations := map[string]string{annotations.Ignore: "true", annotations.Match: "true"}
	want := metav1.ObjectMeta{
		Name: "app", Namespace: "team", UID: "u-1", ResourceVersion: "42",
		CreationTimestamp: created, DeletionTimestamp: &deleted, Annotations: keptAnnotations,
	}
	bare := full()
	bare.Annotations = map[string]string{"team.example/owner": "web"}
	wantBare := want
	wantBare.Annotations = nil

	trim := trimConfigMetadata(annotations.DefaultKeys())
	tests := []struct {
		name string
		in   *metav1.PartialObjectMetadata
		want metav1.ObjectMeta
	}{
		{name: "labels, owners, finalizers, managed fields and other annotations go", in: full(), want: want},
		{name: "no annotation of ripple's leaves no annotation map", in: bare, want: wantBare},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := trim(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*metav1.PartialObjectMetadata).ObjectMeta
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("trimmed = %+v\nwant      %+v", got, tt.want)
			}
			again, _ := trim(out)
			if !reflect.DeepEqual(again.(*metav1.PartialObjectMetadata).ObjectMeta, tt.want) {
				t.Error("trimming twice changed the object: client-go may transform an object twice")
			}
		})
	}
}

func TestTrimConfigMetadata_LeavesOtherObjectsAlone(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{"a": "b"}}}
	out, err := trimConfigMetadata(annotations.DefaultKeys())(cm)
	if err != nil || out != cm || cm.Labels["a"] != "b" {
		t.Errorf("a typed object was changed: %v, %v", out, err)
	}
}
