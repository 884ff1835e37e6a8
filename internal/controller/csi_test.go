package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// status is a SecretProviderClassPodStatus of the class, at a version,
// reporting versions as "id=version" pairs, as the driver creates it.
func status(name, class, resourceVersion string, versions ...[2]string) unstructured.Unstructured {
	objects := make([]any, 0, len(versions))
	for _, v := range versions {
		objects = append(objects, map[string]any{"id": v[0], "version": v[1]})
	}
	u := statusObject()
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetResourceVersion(resourceVersion)
	u.SetGeneration(1)
	_ = unstructured.SetNestedField(u.Object, class, "status", "secretProviderClassName")
	_ = unstructured.SetNestedSlice(u.Object, objects, "status", "objects")
	return *u
}

// rotated is the status after the driver rotated it: updated in place.
func rotated(st unstructured.Unstructured) unstructured.Unstructured {
	st.SetGeneration(st.GetGeneration() + 1)
	return st
}

// TestSecretProviderClassDigest_ARotationChangesItOnceAndTheRolloutKeepsIt
// replays a rotation: the digest changes when the pod's status reports the
// new version, and stays when the rollout's new pods report the same
// version and the old pod's status is deleted.
func TestSecretProviderClassDigest_ARotationChangesItOnceAndTheRolloutKeepsIt(t *testing.T) {
	v1, v2 := [2]string{"secret/db", "1"}, [2]string{"secret/db", "2"}
	steps := []struct {
		name     string
		statuses []unstructured.Unstructured
		changed  bool
	}{
		{"one pod mounts version 1", []unstructured.Unstructured{status("a", "vault", "9", v1)}, false},
		{"the driver rotates the pod to version 2", []unstructured.Unstructured{rotated(status("a", "vault", "10", v2))}, true},
		{"a new pod mounts version 2", []unstructured.Unstructured{rotated(status("a", "vault", "10", v2)), status("b", "vault", "11", v2)}, false},
		{"a newer pod mounts a version of its own, as a provider's dynamic secret", []unstructured.Unstructured{rotated(status("a", "vault", "10", v2)), status("b", "vault", "11", v2), status("c", "vault", "12", [2]string{"secret/db", "c"})}, false},
	}
	var prev string
	for i, step := range steps {
		newest, ok := newestByClass(step.statuses)["vault"]
		if !ok {
			t.Fatalf("%s: no status for the class", step.name)
		}
		sum := reportedSum(newest.Unstructured, "vault").String()
		if changed := i > 0 && sum != prev; changed != step.changed {
			t.Errorf("%s: digest changed = %v, want %v", step.name, changed, step.changed)
		}
		prev = sum
	}
}

func TestNewestByClass_PicksTheNewestRotatedStatusThenTheGreatestResourceVersionAsANumberPerClass(t *testing.T) {
	cases := []struct {
		name     string
		statuses []unstructured.Unstructured
		want     map[string]string
	}{
		{"10 is after 9", []unstructured.Unstructured{status("a", "vault", "9"), status("b", "vault", "10")}, map[string]string{"vault": "b"}},
		{"order of the list does not matter", []unstructured.Unstructured{status("b", "vault", "10"), status("a", "vault", "9")}, map[string]string{"vault": "b"}},
		{"each class on its own", []unstructured.Unstructured{status("a", "vault", "9"), status("b", "aws", "3")}, map[string]string{"vault": "a", "aws": "b"}},
		{"a status without class is skipped", []unstructured.Unstructured{status("a", "", "9")}, map[string]string{}},
		{"a rotated status before a newer mount", []unstructured.Unstructured{rotated(status("a", "vault", "9")), status("b", "vault", "10")}, map[string]string{"vault": "a"}},
		{"the newer of two rotated statuses", []unstructured.Unstructured{rotated(status("b", "vault", "10")), rotated(status("a", "vault", "9"))}, map[string]string{"vault": "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := newestByClass(tc.statuses)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d classes, want %d", len(got), len(tc.want))
			}
			for class, name := range tc.want {
				if st, ok := got[class]; !ok || st.GetName() != name {
					t.Errorf("newest of %s = %v, want %s", class, got[class], name)
				}
			}
		})
	}
}

func TestReportedSum_DependsOnTheVersionsAndTheClassOnly(t *testing.T) {
	base := status("a", "vault", "1", [2]string{"x", "1"}, [2]string{"y", "1"})
	sum := reportedSum(&base, "vault")
	reordered := status("b", "vault", "7", [2]string{"y", "1"}, [2]string{"x", "1"})
	if reportedSum(&reordered, "vault") != sum {
		t.Error("the same versions in another order or another pod's status gave another digest")
	}
	other := status("a", "vault", "1", [2]string{"x", "2"}, [2]string{"y", "1"})
	if reportedSum(&other, "vault") == sum {
		t.Error("a new version gave the same digest")
	}
	if reportedSum(&base, "aws") == sum {
		t.Error("another class gave the same digest")
	}
}

// TestNewestByClass_ARotatedStatusWinsOverANewerMountListedFirst: a newer
// pod's status of the class, not rotated, must not hide another pod's
// rotation, whichever the informer lists first.
func TestNewestByClass_ARotatedStatusWinsOverANewerMountListedFirst(t *testing.T) {
	got := newestByClass([]unstructured.Unstructured{status("b", "vault", "10"), rotated(status("a", "vault", "9"))})
	if st := got["vault"]; st.GetName() != "a" || !st.rotated {
		t.Fatalf("picked %s (rotated %v), want the rotated a", st.GetName(), st.rotated)
	}
}

// TestRotatedSince_CountsARotationWithinTheSlack: a rotation written a
// few seconds before a record, made while ripple's cache lagged, is not
// taken for one the record saw.
func TestRotatedSince_CountsARotationWithinTheSlack(t *testing.T) {
	st := rotated(status("a", "vault", "10"))
	written := metav1.NewTime(time.Unix(997, 0))
	st.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "secrets-store-csi-driver", Time: &written}})
	cs := classStatus{Unstructured: &st, rotated: true}
	if !rotatedSince(cs, 1000) {
		t.Error("a rotation 3 s before the record does not count")
	}
	if rotatedSince(cs, 1000+rotationSlack+1) {
		t.Error("a rotation older than the slack counts")
	}
}
