// Command demo shows ripple's main job end to end: it starts a full local
// cluster, runs the ripple binary against it, applies config/samples/, edits
// the ConfigMap the sample Deployment mounts, and prints the rollout as it
// happens. Everything is torn down at the end. `make demo` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/test/cluster"
)

const (
	// keyNamespace is ripple's own namespace, where it keeps its digest key.
	keyNamespace = "default"
	namespace    = "ripple-demo"
	deployment   = "web"
	configMap    = "web-files"
)

func main() {
	ripple := flag.String("ripple", "bin/ripple", "path of the ripple binary")
	samples := flag.String("samples", "config/samples", "directory of the sample manifests")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *ripple, *samples); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, ripple, samples string) (err error) {
	step("Starting a local cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with 2 fake nodes")
	c, err := cluster.StartFull(ctx, cluster.Options{Nodes: 2})
	if err != nil {
		return fmt.Errorf("starting the local cluster: %w", err)
	}
	defer func() {
		if err != nil {
			c.KeepLogs()
		}
		step("Tearing everything down")
		err = errors.Join(err, c.Stop())
	}()
	k, err := client.New(c.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}

	step("Starting ripple (" + ripple + ") with its default flags")
	stopRipple, err := startRipple(ripple, c.Kubeconfig, c.LogDir)
	if err != nil {
		return err
	}
	defer stopRipple()
	if err := showKey(ctx, k); err != nil {
		return err
	}

	step("Applying " + samples + "/: a Deployment annotated reloader.stakater.com/auto=\"true\" that mounts ConfigMap web-files and takes env from ConfigMap web-env")
	if err := apply(ctx, k, samples); err != nil {
		return err
	}
	if err := waitFor(ctx, "the Deployment to be available and recorded by ripple", func() (bool, error) {
		d, err := getDeployment(ctx, k)
		return err == nil && d.Status.AvailableReplicas == 2 && d.Annotations[annotations.Recorded] != "", err
	}); err != nil {
		return err
	}
	fmt.Println("ripple recorded the config on first sight without rolling:")
	if err := printState(ctx, k); err != nil {
		return err
	}

	step("Editing ConfigMap web-files: index.html becomes version 2")
	cm := &corev1.ConfigMap{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: namespace, Name: configMap}, cm); err != nil {
		return fmt.Errorf("reading the ConfigMap: %w", err)
	}
	cm.Data["index.html"] = "<h1>version 2</h1>"
	if err := k.Update(ctx, cm); err != nil {
		return fmt.Errorf("editing the ConfigMap: %w", err)
	}
	edited := time.Now()

	step("The rollout, as it happens")
	if err := followRollout(ctx, k, edited); err != nil {
		return err
	}
	return printEvents(ctx, k)
}

func step(s string) { fmt.Printf("\n==> %s\n", s) }

func startRipple(path, kubeconfig, logDir string) (func(), error) {
	logPath := filepath.Join(logDir, "ripple.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the ripple log: %w", err)
	}
	cmd := exec.Command(path, "--kubeconfig="+kubeconfig, "--log-format=text",
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
	// ripple's own namespace, as the downward API gives it in a pod: it
	// keeps its digest key there.
	cmd.Env = append(os.Environ(), "POD_NAMESPACE="+keyNamespace)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting ripple: %w", err)
	}
	fmt.Println("ripple's log:", logPath)
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		_ = logFile.Close()
	}, nil
}

// showKey waits for the digest key Secret ripple creates at its first
// start, and says what it is without showing the key.
func showKey(ctx context.Context, k client.Client) error {
	s := &corev1.Secret{}
	if err := waitFor(ctx, "ripple to create its digest key", func() (bool, error) {
		err := k.Get(ctx, client.ObjectKey{Namespace: keyNamespace, Name: options.DefaultKeySecret}, s)
		return err == nil, client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	fmt.Printf("ripple created Secret %s/%s with a random %d-byte key (key ID %s): it keys the digests, and every restart reuses it\n",
		keyNamespace, options.DefaultKeySecret, len(s.Data["key"]), digest.NewKeyed(s.Data["key"]).KeyID())
	return nil
}

// apply creates every object in the directory's YAML files.
func apply(ctx context.Context, k client.Client, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return fmt.Errorf("finding manifests in %s: %w", dir, err)
	}
	if len(files) == 0 {
		return fmt.Errorf("no manifests in %s", dir)
	}
	for _, f := range files {
		if err := applyFile(ctx, k, f); err != nil {
			return err
		}
	}
	return nil
}

func applyFile(ctx context.Context, k client.Client, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("decoding %s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if err := k.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		fmt.Printf("created %s/%s\n", strings.ToLower(obj.GetKind()), obj.GetName())
	}
}

func getDeployment(ctx context.Context, k client.Client) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	err := k.Get(ctx, client.ObjectKey{Namespace: namespace, Name: deployment}, d)
	return d, client.IgnoreNotFound(err)
}

func waitFor(ctx context.Context, what string, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	fmt.Printf("waiting for %s...\n", what)
	for {
		ok, err := done()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// followRollout prints the ReplicaSets each time they change, until the new
// one has every replica ready and the old one none.
func followRollout(ctx context.Context, k client.Client, since time.Time) error {
	last := ""
	return waitFor(ctx, "the rollout to complete", func() (bool, error) {
		d, err := getDeployment(ctx, k)
		if err != nil {
			return false, err
		}
		table, err := replicaSets(ctx, k)
		if err != nil {
			return false, err
		}
		if table != last {
			fmt.Printf("-- %.1fs after the edit; pod template %s=%s\n%s", time.Since(since).Seconds(),
				annotations.ConfigDigest, short(d.Spec.Template.Annotations[annotations.ConfigDigest]), table)
			last = table
		}
		complete := d.Spec.Template.Annotations[annotations.ConfigDigest] != "" &&
			d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == 2 &&
			d.Status.AvailableReplicas == 2 && d.Status.Replicas == 2
		return complete, nil
	})
}

func printState(ctx context.Context, k client.Client) error {
	d, err := getDeployment(ctx, k)
	if err != nil {
		return err
	}
	table, err := replicaSets(ctx, k)
	if err != nil {
		return err
	}
	fmt.Printf("pod template %s=%q\n%s", annotations.ConfigDigest, d.Spec.Template.Annotations[annotations.ConfigDigest], table)
	return nil
}

func replicaSets(ctx context.Context, k client.Client) (string, error) {
	list := &appsv1.ReplicaSetList{}
	if err := k.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return "", fmt.Errorf("listing ReplicaSets: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "   %-24s %8s %8s %6s  %s\n", "REPLICASET", "DESIRED", "CURRENT", "READY", "CONFIG-DIGEST")
	for _, rs := range list.Items {
		var desired int32
		if rs.Spec.Replicas != nil {
			desired = *rs.Spec.Replicas
		}
		fmt.Fprintf(&b, "   %-24s %8d %8d %6d  %s\n", rs.Name, desired, rs.Status.Replicas, rs.Status.ReadyReplicas,
			short(rs.Spec.Template.Annotations[annotations.ConfigDigest]))
	}
	return b.String(), nil
}

func printEvents(ctx context.Context, k client.Client) error {
	step("Events on the Deployment")
	list := &corev1.EventList{}
	if err := k.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing Events: %w", err)
	}
	found := false
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Deployment" {
			fmt.Printf("   %-8s %-18s %s\n", e.Type, e.Reason, e.Message)
			found = found || e.Reason == "Reloaded"
		}
	}
	if !found {
		return errors.New("no Reloaded Event on the Deployment")
	}
	return nil
}

// short shows the start of the digest part of a stamp ("key:time:digest").
func short(stamp string) string {
	digest := stamp[strings.LastIndex(stamp, ":")+1:]
	if len(digest) > 12 {
		return digest[:12] + "…"
	}
	if digest == "" {
		return "-"
	}
	return digest
}
