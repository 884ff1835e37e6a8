package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
)

var (
	buildOnce   sync.Once
	rippleBin   string
	rippleCount int
)

// rippleBinary builds cmd/ripple once per suite, or takes RIPPLE_BINARY, so
// that the e2e specs run the same program users deploy.
func rippleBinary() string {
	GinkgoHelper()
	buildOnce.Do(func() {
		if p := os.Getenv("RIPPLE_BINARY"); p != "" {
			rippleBin = p
			return
		}
		// The working directory is test/e2e; bin/ is ignored by git.
		var err error
		rippleBin, err = filepath.Abs(filepath.Join("..", "..", "bin", "e2e", "ripple"))
		Expect(err).NotTo(HaveOccurred())
		out, err := exec.Command("go", "build", "-o", rippleBin, "github.com/ripple-controller/ripple/cmd/ripple").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "building ripple: %s", out)
	})
	return rippleBin
}

// keyNamespace holds the digest key Secret of every ripple started without
// --hmac-key-secret.
const keyNamespace = metav1.NamespaceDefault

// rippleKeyed is what ripple digests with: the key it created, unless a
// spec named another.
func rippleKeyed(ctx context.Context) digest.Keyed {
	GinkgoHelper()
	s, err := clientset.CoreV1().Secrets(keyNamespace).Get(ctx, options.DefaultKeySecret, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred(), "ripple created its digest key Secret")
	return digest.NewKeyed(s.Data["key"])
}

// rippleProcess is the ripple binary running against the local cluster.
type rippleProcess struct {
	cmd     *exec.Cmd
	LogPath string
	done    chan struct{}
}

// startRipple runs the ripple binary with args (plus the cluster's
// kubeconfig) and stops it when the spec ends. Its log stays in the
// cluster's log dir.
func startRipple(args ...string) *rippleProcess {
	GinkgoHelper()
	rippleCount++
	logPath := filepath.Join(env.LogDir, fmt.Sprintf("ripple-%d.log", rippleCount))
	logFile, err := os.Create(logPath)
	Expect(err).NotTo(HaveOccurred())
	base := []string{"--kubeconfig=" + env.Kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-format=text"}
	cmd := exec.Command(rippleBinary(), append(base, args...)...)
	// ripple keeps its digest key in its own namespace: pin it, whatever
	// the environment of the specs says.
	cmd.Env = append(os.Environ(), "POD_NAMESPACE="+keyNamespace)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(cmd.Start()).To(Succeed())
	p := &rippleProcess{cmd: cmd, LogPath: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	GinkgoWriter.Printf("ripple pid %d logs to %s\n", cmd.Process.Pid, logPath)
	DeferCleanup(p.Stop)
	return p
}

// Stop ends ripple gracefully, as Kubernetes would.
func (p *rippleProcess) Stop() {
	GinkgoHelper()
	p.signal(syscall.SIGTERM)
}

// Kill ends ripple at once, as a crash or an OOM kill would.
func (p *rippleProcess) Kill() {
	GinkgoHelper()
	p.signal(syscall.SIGKILL)
}

func (p *rippleProcess) signal(sig syscall.Signal) {
	GinkgoHelper()
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	Eventually(p.done, 30*time.Second).Should(BeClosed(), "ripple exits on %s", sig)
}

func (p *rippleProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
