package manager

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ripple-controller/ripple/internal/digest"
)

var secretsResource = schema.GroupResource{Resource: "secrets"}

func keySecret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ripple", Name: "ripple-digest-key"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// storedKey reads the key the Secret holds after loadKey.
func storedKey(t *testing.T, c client.Client) []byte {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ripple", Name: "ripple-digest-key"}, s); err != nil {
		t.Fatalf("the key Secret is not there: %v", err)
	}
	return s.Data[KeyField]
}

func TestLoadKey(t *testing.T) {
	current, old := strings.Repeat("c", 32), strings.Repeat("o", 16)
	raced := bytes.Repeat([]byte("r"), 32)
	cases := []struct {
		name     string
		existing *corev1.Secret
		funcs    interceptor.Funcs
		// wantKey is the key ripple must use; nil means the one it created.
		wantKey  []byte
		previous []string
		wantErr  []string
		// notErr must not be in the error.
		notErr string
	}{
		{name: "an existing key is used as it is",
			existing: keySecret(map[string]string{"key": current}), wantKey: []byte(current)},
		{name: "a missing Secret is created with 32 random bytes"},
		{name: "previous keys are found by their key ID",
			existing: keySecret(map[string]string{"key": current, "previous": old, "previous-2": strings.Repeat("p", 20)}),
			wantKey:  []byte(current), previous: []string{old, strings.Repeat("p", 20)}},
		{name: "a Secret another replica created meanwhile wins",
			funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				other := keySecret(nil)
				other.Data[KeyField] = raced
				if err := c.Create(ctx, other); err != nil {
					return err
				}
				return apierrors.NewAlreadyExists(secretsResource, obj.GetName())
			}},
			wantKey: raced},
		{name: "a short key is refused, naming the flag and the data key",
			existing: keySecret(map[string]string{"key": "abc"}), wantErr: []string{"--hmac-key-secret", "ripple/ripple-digest-key", `"key"`, "at least 16 bytes"}},
		{name: "a Secret without a key is refused",
			existing: keySecret(nil), wantErr: []string{"--hmac-key-secret", `"key"`}},
		{name: "a short previous key is refused, naming its data key",
			existing: keySecret(map[string]string{"key": current, "previous-1": "xyz"}), wantErr: []string{"--hmac-key-secret", `"previous-1"`}},
		{name: "without the right to create the Secret, the error says what to grant",
			funcs: interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
				return apierrors.NewForbidden(secretsResource, "ripple-digest-key", nil)
			}},
			wantErr: []string{"--hmac-key-secret", "ripple/ripple-digest-key", "does not exist", "create on secrets in namespace ripple"}},
		{name: "without the right to read the Secret, the error says so",
			funcs: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return apierrors.NewForbidden(secretsResource, "ripple-digest-key", nil)
			}},
			wantErr: []string{"--hmac-key-secret", "ripple/ripple-digest-key", "get"}},
		{name: "an API server out of reach is not blamed on ripple's rights",
			funcs: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return errors.New("dial tcp 10.0.0.1:443: connect: connection refused")
			}},
			wantErr: []string{"--hmac-key-secret", "ripple/ripple-digest-key", "connection refused"}, notErr: "needs get"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithInterceptorFuncs(c.funcs)
			if c.existing != nil {
				b = b.WithObjects(c.existing)
			}
			cl := b.Build()
			keyed, err := loadKey(context.Background(), cl, "ripple/ripple-digest-key", "")
			if c.wantErr != nil {
				if err == nil {
					t.Fatalf("loadKey succeeded, want an error")
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if c.notErr != "" && strings.Contains(err.Error(), c.notErr) {
					t.Errorf("error %q says %q", err, c.notErr)
				}
				if strings.Contains(err.Error(), "abc") || strings.Contains(err.Error(), "xyz") {
					t.Errorf("error %q quotes a key", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("loadKey: %v", err)
			}
			want := c.wantKey
			if want == nil {
				want = storedKey(t, cl)
				if len(want) != 32 {
					t.Fatalf("created a key of %d bytes, want 32", len(want))
				}
			}
			if keyed.KeyID() != digest.NewKeyed(want).KeyID() {
				t.Errorf("ripple uses key ID %s, want that of the Secret's key %s", keyed.KeyID(), digest.NewKeyed(want).KeyID())
			}
			if !bytes.Equal(storedKey(t, cl), want) {
				t.Errorf("the Secret's key changed")
			}
			for _, p := range c.previous {
				if _, ok := keyed.Lookup(digest.NewKeyed([]byte(p)).KeyID()); !ok {
					t.Errorf("a previous key is not found by its key ID")
				}
			}
		})
	}
}

func TestLoadKey_TwoStartsCreateOneKey(t *testing.T) {
	cl := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	first, err := loadKey(context.Background(), cl, "ripple/ripple-digest-key", "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := loadKey(context.Background(), cl, "ripple/ripple-digest-key", "")
	if err != nil {
		t.Fatal(err)
	}
	if first.KeyID() != second.KeyID() {
		t.Errorf("a restart changed the key: %s, then %s", first.KeyID(), second.KeyID())
	}
}

func TestOwnNamespace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kubeconfig := func(ns string) string {
		return write("kubeconfig-"+ns, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://example.invalid"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: "`+ns+`"}}]
current-context: x
`)
	}
	saFile, emptySA, noSA := write("sa-namespace", "from-sa\n"), write("sa-empty", ""), filepath.Join(dir, "no-such-file")
	cases := []struct {
		name                 string
		podNamespace, sa     string
		kubeconfig, envKubec string
		want                 string
		wantErr              bool
	}{
		{name: "POD_NAMESPACE wins", podNamespace: "from-env", sa: saFile, kubeconfig: kubeconfig("from-kubeconfig"), want: "from-env"},
		{name: "in a pod without a kubeconfig, the service account's namespace", sa: saFile, want: "from-sa"},
		{name: "--kubeconfig's context namespace wins over the pod's", sa: saFile, kubeconfig: kubeconfig("from-kubeconfig"), want: "from-kubeconfig"},
		{name: "$KUBECONFIG's context namespace wins over the pod's", sa: saFile, envKubec: kubeconfig("from-env-kubeconfig"), want: "from-env-kubeconfig"},
		{name: "an empty namespace file is no namespace", sa: emptySA, want: "default"},
		{name: "a context without a namespace means default", sa: noSA, kubeconfig: kubeconfig(""), want: "default"},
		{name: "no kubeconfig at all means default", sa: noSA, want: "default"},
		{name: "a --kubeconfig that does not exist is an error", sa: noSA, kubeconfig: filepath.Join(dir, "missing"), wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HOME", dir)
			t.Setenv("KUBECONFIG", c.envKubec)
			getenv := func(k string) string {
				if k == "POD_NAMESPACE" {
					return c.podNamespace
				}
				return os.Getenv(k)
			}
			got, err := ownNamespace(getenv, c.sa, c.kubeconfig)
			if (err != nil) != c.wantErr {
				t.Fatalf("ownNamespace() error = %v, want error %v", err, c.wantErr)
			}
			if got != c.want {
				t.Errorf("ownNamespace() = %q, want %q", got, c.want)
			}
		})
	}
}
