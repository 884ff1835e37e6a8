// Command memprobe syncs the informer caches a ripple-like controller needs
// and prints its own peak RSS, to show what a design change in ripple's cache
// would save before anyone makes it. Modes:
//
//	typed  ConfigMaps and Secrets as typed objects whose data a transform
//	       replaces with a digest (what ripple does today)
//	meta   ConfigMaps and Secrets as metadata only (PartialObjectMetadata):
//	       the API server never sends their data
//
// Deployments, StatefulSets and DaemonSets are typed in both, managed fields
// stripped. It prints one line: mode, VmHWM, VmRSS, RssAnon, RssFile in KiB,
// and the time to sync.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig")
	mode := flag.String("mode", "typed", "typed or meta")
	flag.Parse()
	if err := run(*kubeconfig, *mode); err != nil {
		fmt.Fprintln(os.Stderr, "memprobe:", err)
		os.Exit(1)
	}
}

func reduce(obj any) (any, error) {
	h := sha256.New()
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		for k, v := range o.Data {
			h.Write([]byte(k))
			h.Write([]byte(v))
		}
		for k, v := range o.BinaryData {
			h.Write([]byte(k))
			h.Write(v)
		}
		o.Data, o.BinaryData = nil, nil
		o.SetAnnotations(withDigest(o.GetAnnotations(), h.Sum(nil)))
	case *corev1.Secret:
		for k, v := range o.Data {
			h.Write([]byte(k))
			h.Write(v)
		}
		o.Data, o.StringData = nil, nil
		o.SetAnnotations(withDigest(o.GetAnnotations(), h.Sum(nil)))
	}
	if o, ok := obj.(client.Object); ok {
		o.SetManagedFields(nil)
	}
	return obj, nil
}

func withDigest(ann map[string]string, sum []byte) map[string]string {
	if ann == nil {
		ann = map[string]string{}
	}
	ann["ripple.dev/data-digest"] = fmt.Sprintf("%x", sum[:16])
	return ann
}

func run(kubeconfig, mode string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	opts := cache.Options{Scheme: clientgoscheme.Scheme, DefaultTransform: cache.TransformStripManagedFields()}
	if mode == "typed" {
		opts.ByObject = map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Transform: reduce},
			&corev1.Secret{}:    {Transform: reduce},
		}
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	objs := []client.Object{&appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{}}
	switch mode {
	case "typed":
		objs = append(objs, &corev1.ConfigMap{}, &corev1.Secret{})
	case "meta":
		for _, kind := range []string{"ConfigMap", "Secret"} {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
			objs = append(objs, m)
		}
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	start := time.Now()
	for _, o := range objs {
		if _, err := c.GetInformer(ctx, o); err != nil {
			return err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("caches did not sync")
	}
	synced := time.Since(start)
	time.Sleep(2 * time.Second)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	vals := map[string]string{}
	for _, line := range strings.Split(string(status), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			vals[k] = strings.TrimSuffix(strings.TrimSpace(v), " kB")
		}
	}
	fmt.Printf("%s %s %s %s %s %s\n", mode, vals["VmHWM"], vals["VmRSS"], vals["RssAnon"], vals["RssFile"], synced.Round(time.Millisecond))
	return nil
}
