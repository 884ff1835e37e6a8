// Package workload puts the types of workload ripple rolls behind one small
// description, Type, so that the controller handles them alike: where the
// pod template is, and how a change reaches the pods. Deployments,
// StatefulSets and DaemonSets roll through a patch of their pod template;
// a CronJob runs a Job and a Job is recreated (Roll, Resume). Adding a type
// means one new file that registers it, and its tests.
package workload
