// Package workload puts the kinds ripple rolls (Deployment, StatefulSet,
// DaemonSet) behind one small description, so that the controller handles
// them alike. Adding a kind means one new file that appends to All.
package workload
