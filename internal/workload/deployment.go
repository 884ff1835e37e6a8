package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func init() {
	register(newKind[appsv1.Deployment, appsv1.DeploymentList]("Deployment", "deployments",
		func(o *appsv1.Deployment) *corev1.PodTemplateSpec { return &o.Spec.Template }))
}
