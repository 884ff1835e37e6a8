package workload

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ripple-controller/ripple/internal/refs"
)

func TestEnvVarNameManglesAsReloaderDoes(t *testing.T) {
	for _, tc := range []struct {
		ref  refs.Ref
		want string
	}{
		{refs.Ref{Kind: refs.ConfigMap, Name: "app-config"}, "STAKATER_APP_CONFIG_CONFIGMAP"},
		{refs.Ref{Kind: refs.Secret, Name: "db.credentials"}, "STAKATER_DB_CREDENTIALS_SECRET"},
		{refs.Ref{Kind: refs.ConfigMap, Name: "a--b..c"}, "STAKATER_A_B_C_CONFIGMAP"},
		{refs.Ref{Kind: refs.ConfigMap, Name: "-lead"}, "STAKATER_LEAD_CONFIGMAP"},
		{refs.Ref{Kind: refs.ConfigMap, Name: "trail-"}, "STAKATER_TRAIL__CONFIGMAP"},
		{refs.Ref{Kind: refs.SecretProviderClass, Name: "vault"}, "STAKATER_VAULT_SECRETPROVIDERCLASS"},
	} {
		if got := EnvVarName(tc.ref); got != tc.want {
			t.Errorf("EnvVarName(%s) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}

func TestEnvOpsTakeOverAnExistingVariableAndAddOthersToTheirContainer(t *testing.T) {
	path := []string{"spec", "template"}
	tmpl := func(containers ...corev1.Container) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers}}
	}
	for _, tc := range []struct {
		name    string
		tmpl    *corev1.PodTemplateSpec
		vars    []EnvVar
		want    string
		wantErr bool
	}{
		{"first variable of a container without env creates the list",
			tmpl(corev1.Container{Name: "a"}),
			[]EnvVar{{Container: "a", Name: "STAKATER_X_CONFIGMAP", Value: "v"}},
			`[{"op":"add","path":"/spec/template/spec/containers/0/env","value":[{"name":"STAKATER_X_CONFIGMAP","value":"v"}]}]`, false},
		{"a second variable for the same container appends",
			tmpl(corev1.Container{Name: "a"}),
			[]EnvVar{{Container: "a", Name: "STAKATER_X_CONFIGMAP", Value: "v"}, {Container: "a", Name: "STAKATER_Y_SECRET", Value: "w"}},
			`[{"op":"add","path":"/spec/template/spec/containers/0/env","value":[{"name":"STAKATER_X_CONFIGMAP","value":"v"},{"name":"STAKATER_Y_SECRET","value":"w"}]}]`, false},
		{"a variable added to a container with env appends it, leaving the others as they are",
			tmpl(corev1.Container{Name: "a", Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}),
			[]EnvVar{{Container: "a", Name: "STAKATER_X_CONFIGMAP", Value: "v"}},
			`[{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"STAKATER_X_CONFIGMAP","value":"v"}}]`, false},
		{"an existing variable is replaced where it is, even on another container",
			tmpl(corev1.Container{Name: "a"}, corev1.Container{Name: "b", Env: []corev1.EnvVar{{Name: "K", Value: "1"}, {Name: "STAKATER_X_CONFIGMAP", Value: "old"}}}),
			[]EnvVar{{Container: "a", Name: "STAKATER_X_CONFIGMAP", Value: "v"}},
			`[{"op":"replace","path":"/spec/template/spec/containers/1/env/1","value":{"name":"STAKATER_X_CONFIGMAP","value":"v"}}]`, false},
		{"a variable on two containers is replaced on each container it is set for, once",
			tmpl(corev1.Container{Name: "a", Env: []corev1.EnvVar{{Name: "STAKATER_X_SECRET", Value: "old"}}},
				corev1.Container{Name: "b", Env: []corev1.EnvVar{{Name: "STAKATER_X_SECRET", Value: "old"}}}),
			[]EnvVar{{Container: "b", Name: "STAKATER_X_SECRET", Value: "v"}, {Container: "a", Name: "STAKATER_X_SECRET", Value: "v"},
				{Container: "b", Name: "STAKATER_X_SECRET", Value: "v"}},
			`[{"op":"replace","path":"/spec/template/spec/containers/0/env/0","value":{"name":"STAKATER_X_SECRET","value":"v"}},` +
				`{"op":"replace","path":"/spec/template/spec/containers/1/env/0","value":{"name":"STAKATER_X_SECRET","value":"v"}}]`, false},
		{"a variable already set by an earlier one of the list is set once",
			tmpl(corev1.Container{Name: "a", Env: []corev1.EnvVar{{Name: "K", Value: "1"}}}),
			[]EnvVar{{Container: "a", Name: "STAKATER_X_CONFIGMAP", Value: "v"}, {Container: "a", Name: "STAKATER_X_CONFIGMAP", Value: "w"}},
			`[{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"STAKATER_X_CONFIGMAP","value":"w"}}]`, false},
		{"a container that is not there is an error",
			tmpl(corev1.Container{Name: "a"}),
			[]EnvVar{{Container: "z", Name: "STAKATER_X_CONFIGMAP", Value: "v"}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := envOps(path, tc.tmpl, tc.vars)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			raw, _ := json.Marshal(ops)
			if string(raw) != tc.want {
				t.Errorf("ops = %s\nwant %s", raw, tc.want)
			}
		})
	}
}

// Only the API server's answer to a JSON patch whose resourceVersion test
// failed reads as stale, and is retried as a conflict: a webhook's 422 is
// an error, reported and retried with backoff.
func TestStaleTest_TellsAFailedTestFromOtherRefusals(t *testing.T) {
	withMessage := func(msg string, causes ...metav1.StatusCause) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
			Message: msg, Details: &metav1.StatusDetails{Causes: causes}}}
	}
	tests := []struct {
		name  string
		err   error
		stale bool
	}{
		{"the answer to a patch that does not apply", apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", "testing value /metadata/resourceVersion failed", 0, false), true},
		{"a webhook's denial with code 422 and no causes", withMessage(`admission webhook "policy.example.com" denied the request: no`), false},
		{"an invalid object", withMessage("Deployment.apps \"web\" is invalid", metav1.StatusCause{Field: "spec.template"}), false},
		{"a conflict", apierrors.NewConflict(schema.GroupResource{Resource: "deployments"}, "web", errors.New("changed")), false},
		{"not an API error", errors.New("connection reset"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := staleTest(tt.err); got != tt.stale {
				t.Errorf("staleTest = %v, want %v", got, tt.stale)
			}
		})
	}
}
