package bench

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// AutoAnnotation is Reloader's annotation that makes a workload track every
// ConfigMap and Secret it uses.
const AutoAnnotation = "reloader.stakater.com/auto"

// ConfigMapReloadAnnotation is Reloader's list of ConfigMap names, each an
// anchored regular expression.
const ConfigMapReloadAnnotation = "configmap.reloader.stakater.com/reload"

// Layout is what one scenario creates in its namespace.
type Layout struct {
	Namespace string
	// Workloads Deployments dep-<i>, each mounting ConfigMap cm-<i mod ConfigMaps>.
	Workloads, ConfigMaps int
	// UnusedConfigMaps of UnusedConfigMapBytes and UnusedSecrets of
	// UnusedSecretBytes that no workload uses: weight for the cache.
	UnusedConfigMaps, UnusedConfigMapBytes int
	UnusedSecrets, UnusedSecretBytes       int
}

func depName(i int) string { return fmt.Sprintf("dep-%d", i) }
func cmName(i int) string  { return fmt.Sprintf("cm-%d", i) }

// Users maps each ConfigMap to the Deployments that mount it: what the floor
// knows in advance and what every edit is checked against.
func (l Layout) Users() map[string][]string {
	out := make(map[string][]string, l.ConfigMaps)
	if l.ConfigMaps == 0 {
		return out
	}
	for i := 0; i < l.Workloads; i++ {
		cm := cmName(i % l.ConfigMaps)
		out[cm] = append(out[cm], depName(i))
	}
	return out
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(parent context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	next := make(chan int)
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = parent.Err()
	}
	return first
}

func blob(n int) string {
	b := make([]byte, n*3/4+3)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

// Create makes the namespace and everything in it.
func (l Layout) Create(ctx context.Context, cs kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: l.Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", l.Namespace, err)
	}
	const workers = 32
	if l.ConfigMaps == 0 {
		return nil
	}
	err := parallel(ctx, l.ConfigMaps, workers, func(ctx context.Context, i int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cmName(i)}, Data: map[string]string{"value": "0"}}
		_, err := cs.CoreV1().ConfigMaps(l.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("creating ConfigMaps: %w", err)
	}
	err = parallel(ctx, l.Workloads, workers, func(ctx context.Context, i int) error {
		_, err := cs.AppsV1().Deployments(l.Namespace).Create(ctx, deployment(depName(i), cmName(i%l.ConfigMaps)), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("creating Deployments: %w", err)
	}
	err = parallel(ctx, l.UnusedConfigMaps, workers, func(ctx context.Context, i int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unused-%d", i)},
			Data: map[string]string{"blob": blob(l.UnusedConfigMapBytes)}}
		_, err := cs.CoreV1().ConfigMaps(l.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("creating unused ConfigMaps: %w", err)
	}
	err = parallel(ctx, l.UnusedSecrets, workers, func(ctx context.Context, i int) error {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unused-%d", i)},
			Data: map[string][]byte{"blob": []byte(blob(l.UnusedSecretBytes))}}
		_, err := cs.CoreV1().Secrets(l.Namespace).Create(ctx, s, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("creating unused Secrets: %w", err)
	}
	return nil
}

// Delete removes everything the layout created. No namespace controller runs
// in the bench's control plane, so the namespace's content is deleted
// explicitly; the emptied namespace stays behind.
func (l Layout) Delete(ctx context.Context, cs kubernetes.Interface) error {
	all := metav1.ListOptions{}
	del := metav1.DeleteOptions{}
	if err := cs.AppsV1().Deployments(l.Namespace).DeleteCollection(ctx, del, all); err != nil {
		return err
	}
	if err := cs.CoreV1().ConfigMaps(l.Namespace).DeleteCollection(ctx, del, all); err != nil {
		return err
	}
	if err := cs.CoreV1().Secrets(l.Namespace).DeleteCollection(ctx, del, all); err != nil {
		return err
	}
	return cs.CoreV1().Events(l.Namespace).DeleteCollection(ctx, del, all)
}

func deployment(name, cm string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{AutoAnnotation: "true"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:         "app",
						Image:        "bench-app:1",
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/config"}},
					}},
					Volumes: []corev1.Volume{{
						Name: "config",
						VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: cm},
						}},
					}},
				},
			},
		},
	}
}
