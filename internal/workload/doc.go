// Package workload puts the types of workload ripple rolls (Deployment,
// StatefulSet, DaemonSet) behind one small description, Type, so that the
// controller handles them alike. Adding a type means one new file that
// registers it, and its tests.
package workload
