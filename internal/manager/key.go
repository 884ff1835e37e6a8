package manager

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/digest"
)

// The data layout of the digest key Secret.
const (
	// KeyField holds the current key, the one every new digest is made with.
	KeyField = "key"
	// PreviousPrefix starts the data keys ("previous", "previous-1", ...)
	// that hold keys the current one replaced: what was recorded under
	// them is still compared after a rotation, so no change is lost.
	PreviousPrefix = "previous"
)

const (
	// minKeyLen is the shortest key accepted: 128 bits.
	minKeyLen = 16
	// newKeyLen is the size of the key ripple creates: SHA-256's block
	// size is larger, so HMAC uses all of it.
	newKeyLen = 32
	// serviceAccountNamespace is where a pod finds its namespace.
	serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
)

// loadKey reads the digest key Secret that --hmac-key-secret names (a name
// in ripple's own namespace, or namespace/name) and creates it with a random
// key if it does not exist, so that ripple is never unkeyed.
func loadKey(ctx context.Context, c client.Client, secret, kubeconfig string) (digest.Keyed, error) {
	key, err := keySecretName(secret, kubeconfig)
	if err != nil {
		return digest.Keyed{}, err
	}
	s, err := getOrCreateKey(ctx, c, key)
	if err != nil {
		return digest.Keyed{}, err
	}
	keyed, err := parseKey(s.Data)
	if err != nil {
		return digest.Keyed{}, fmt.Errorf("--hmac-key-secret: Secret %s %w", key, err)
	}
	logf.FromContext(ctx).Info("Using the digest key", "secret", key.String(), "keyID", keyed.KeyID(), "previousKeys", len(previousFields(s.Data)))
	return keyed, nil
}

// keySecretName resolves a Secret name without a namespace into ripple's own.
func keySecretName(secret, kubeconfig string) (types.NamespacedName, error) {
	if ns, name, ok := strings.Cut(secret, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}, nil
	}
	ns, err := ownNamespace(os.Getenv, serviceAccountNamespace, kubeconfig)
	if err != nil {
		return types.NamespacedName{}, fmt.Errorf("--hmac-key-secret: finding ripple's own namespace for Secret %s (name it as namespace/name instead): %w", secret, err)
	}
	return types.NamespacedName{Namespace: ns, Name: secret}, nil
}

// ownNamespace is the namespace ripple runs in: POD_NAMESPACE (the chart sets
// it through the downward API); else, when ripple uses the in-cluster config
// (no --kubeconfig, no $KUBECONFIG), the namespace file of the pod's service
// account; else the namespace of the kubeconfig's current context, as
// kubectl would use it; else "default". A kubeconfig wins over the namespace
// file because it names the cluster ripple talks to, and the pod ripple runs
// in may be elsewhere.
func ownNamespace(getenv func(string) string, saFile, kubeconfig string) (string, error) {
	if ns := getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	if kubeconfig == "" && getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		if b, err := os.ReadFile(saFile); err == nil {
			if ns := strings.TrimSpace(string(b)); ns != "" {
				return ns, nil
			}
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := rules.Load()
	if err != nil {
		return "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	if c := cfg.Contexts[cfg.CurrentContext]; c != nil && c.Namespace != "" {
		return c.Namespace, nil
	}
	return metav1.NamespaceDefault, nil
}

// getOrCreateKey reads the Secret, or creates it with a new random key. When
// another replica creates it first, its key wins and is read back.
func getOrCreateKey(ctx context.Context, c client.Client, key types.NamespacedName) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := c.Get(ctx, key, s)
	if err == nil {
		return s, nil
	}
	if apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("--hmac-key-secret: reading Secret %s (ripple needs get on it): %w", key, err)
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("--hmac-key-secret: reading Secret %s: %w", key, err)
	}
	created, err := newKeySecret(key)
	if err != nil {
		return nil, err
	}
	err = c.Create(ctx, created)
	switch {
	case err == nil:
		logf.FromContext(ctx).Info("Created the digest key Secret with a random key", "secret", key.String())
		return created, nil
	case apierrors.IsAlreadyExists(err):
		if err := c.Get(ctx, key, s); err != nil {
			return nil, fmt.Errorf("--hmac-key-secret: reading Secret %s, created meanwhile by someone else: %w", key, err)
		}
		return s, nil
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("--hmac-key-secret: Secret %s does not exist and ripple may not create it: grant ripple create on secrets in namespace %s, or create the Secret with %d random bytes under %q: %w", key, key.Namespace, newKeyLen, KeyField, err)
	default:
		return nil, fmt.Errorf("--hmac-key-secret: creating Secret %s: %w", key, err)
	}
}

func newKeySecret(key types.NamespacedName) (*corev1.Secret, error) {
	b := make([]byte, newKeyLen)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("generating a digest key: %w", err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace,
			Name:      key.Name,
			// Tells whoever finds it what it is and who made it.
			Labels: map[string]string{"app.kubernetes.io/name": "ripple", "app.kubernetes.io/component": "digest-key", "app.kubernetes.io/managed-by": "ripple"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{KeyField: b},
	}, nil
}

// parseKey reads the current key and the previous ones. Its errors complete
// "Secret <name> ..." and never quote a key.
func parseKey(data map[string][]byte) (digest.Keyed, error) {
	if len(data[KeyField]) < minKeyLen {
		return digest.Keyed{}, fmt.Errorf("must hold at least %d bytes under %q (it has %d)", minKeyLen, KeyField, len(data[KeyField]))
	}
	var previous [][]byte
	for _, f := range previousFields(data) {
		if len(data[f]) < minKeyLen {
			return digest.Keyed{}, fmt.Errorf("must hold at least %d bytes under %q, a previous key (it has %d)", minKeyLen, f, len(data[f]))
		}
		previous = append(previous, data[f])
	}
	return digest.NewKeyed(data[KeyField], previous...), nil
}

// previousFields lists the data keys holding previous keys, sorted.
func previousFields(data map[string][]byte) []string {
	var out []string
	for f := range data {
		if strings.HasPrefix(f, PreviousPrefix) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}
