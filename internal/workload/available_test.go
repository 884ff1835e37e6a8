package workload

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func statefulSet(strategy appsv1.StatefulSetUpdateStrategy, st appsv1.StatefulSetStatus) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), UpdateStrategy: strategy}, Status: st}
}

func daemonSet(strategy appsv1.DaemonSetUpdateStrategyType, st appsv1.DaemonSetStatus) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: strategy}}, Status: st}
}

// typeOf is the registered workload type of obj.
func typeOf(t *testing.T, obj client.Object) Type {
	t.Helper()
	for _, typ := range All {
		if reflect.TypeOf(typ.New()) == reflect.TypeOf(obj) {
			return typ
		}
	}
	t.Fatalf("no workload type for %T", obj)
	return Type{}
}

// A paced rollout holds its slot until Available; one that can never be
// Available holds it until --rollout-timeout, delaying the rest of its wave.
func TestAvailable_EndsARolloutWhenItsControllerHasNothingLeftToDo(t *testing.T) {
	rolling := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
	onDelete := appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	partitioned := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2)}}
	deployment := func(st appsv1.DeploymentStatus) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)}, Status: st}
	}
	tests := []struct {
		name string
		obj  client.Object
		want bool
	}{
		{"a Deployment with every pod updated and available, no old pod left", deployment(appsv1.DeploymentStatus{ObservedGeneration: 2,
			Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}), true},
		{"a Deployment whose old pod is still terminating", deployment(appsv1.DeploymentStatus{ObservedGeneration: 2,
			Replicas: 4, UpdatedReplicas: 3, AvailableReplicas: 3}), false},
		{"a DaemonSet updated on every node, its new pods not yet available", daemonSet(appsv1.RollingUpdateDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 1}), false},
		{"a StatefulSet with every pod updated and available", statefulSet(rolling, appsv1.StatefulSetStatus{ObservedGeneration: 2,
			UpdatedReplicas: 3, AvailableReplicas: 3, CurrentRevision: "b", UpdateRevision: "b"}), true},
		{"a StatefulSet still replacing pods", statefulSet(rolling, appsv1.StatefulSetStatus{ObservedGeneration: 2,
			UpdatedReplicas: 2, AvailableReplicas: 3, CurrentRevision: "a", UpdateRevision: "b"}), false},
		{"a StatefulSet whose controller has not seen the change", statefulSet(rolling, appsv1.StatefulSetStatus{ObservedGeneration: 1,
			UpdatedReplicas: 3, AvailableReplicas: 3, CurrentRevision: "a", UpdateRevision: "a"}), false},
		{"an OnDelete StatefulSet once its controller saw the change, no pod replaced", statefulSet(onDelete,
			appsv1.StatefulSetStatus{ObservedGeneration: 2, AvailableReplicas: 3, CurrentRevision: "a", UpdateRevision: "b"}), true},
		{"an OnDelete StatefulSet before its controller saw the change", statefulSet(onDelete,
			appsv1.StatefulSetStatus{ObservedGeneration: 1, AvailableReplicas: 3}), false},
		{"a StatefulSet partitioned at 2 with its one pod above the partition updated", statefulSet(partitioned,
			appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 1, AvailableReplicas: 3, CurrentRevision: "a", UpdateRevision: "b"}), true},
		{"a StatefulSet partitioned at 2 with no pod updated yet", statefulSet(partitioned,
			appsv1.StatefulSetStatus{ObservedGeneration: 2, AvailableReplicas: 3, CurrentRevision: "a", UpdateRevision: "b"}), false},
		{"a StatefulSet partitioned at 2 whose change was undone, the pod above the partition not yet back", statefulSet(partitioned,
			appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 2, AvailableReplicas: 3, CurrentRevision: "a", UpdateRevision: "a"}), false},
		{"a StatefulSet partitioned at 2 whose change was undone, every pod back", statefulSet(partitioned,
			appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 3, AvailableReplicas: 3, CurrentRevision: "a", UpdateRevision: "a"}), true},
		{"a StatefulSet partitioned at 2 with its updated pod not yet available", statefulSet(partitioned,
			appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 1, AvailableReplicas: 2, CurrentRevision: "a", UpdateRevision: "b"}), false},
		{"a DaemonSet updated and available on every node", daemonSet(appsv1.RollingUpdateDaemonSetStrategyType, appsv1.DaemonSetStatus{
			ObservedGeneration: 2, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 3}), true},
		{"a DaemonSet still replacing pods", daemonSet(appsv1.RollingUpdateDaemonSetStrategyType, appsv1.DaemonSetStatus{
			ObservedGeneration: 2, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 1, NumberAvailable: 3}), false},
		{"an OnDelete DaemonSet once its controller saw the change, no pod replaced", daemonSet(appsv1.OnDeleteDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 3, NumberAvailable: 3}), true},
		{"an OnDelete DaemonSet before its controller saw the change", daemonSet(appsv1.OnDeleteDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, NumberAvailable: 3}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ := typeOf(t, tt.obj)
			if got := typ.Available(tt.obj); got != tt.want {
				t.Errorf("Available = %v, want %v", got, tt.want)
			}
			// The pacer reads the cached object, which Trim cut down.
			typ.Trim(tt.obj)
			if got := typ.Available(tt.obj); got != tt.want {
				t.Errorf("Available of the trimmed object = %v, want %v", got, tt.want)
			}
		})
	}
}
