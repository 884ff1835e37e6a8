// Package workload puts the types of workload ripple rolls behind one small
// description, Type, so that the controller handles them alike: where the
// pod template is, and how a change reaches the pods. Deployments,
// StatefulSets and DaemonSets roll through a patch of their pod template;
// a CronJob runs a Job and a Job is recreated (Roll, Resume). An Argo
// Rollout, a kind a CRD brings and a flag turns on (EnabledBy), rolls
// through its pod template or spec.restartAt, and may take its pod template
// from a Deployment (TemplateSource, TemplateRef). Adding a type means one
// new file that registers it, and its tests.
package workload
