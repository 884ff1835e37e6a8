package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FloorAgent is the user agent of the floor's requests, which the audit log
// tells from ripple's by it.
const FloorAgent = "ripple-floor"

// FloorOptions configure the floor's client like ripple's defaults.
type FloorOptions struct {
	QPS     float32
	Burst   int
	Workers int
	// Events makes the floor also write, after each patch, the Event
	// ripple writes on a rollout, as Reloader does: the requests a
	// drop-in replacement cannot do without.
	Events bool
}

// Floor is the least a controller can do: on each ConfigMap event it merge
// patches the Deployments it knows, from a precomputed map, to use that
// ConfigMap, with a client limited like ripple's and as many parallel
// patches as ripple has workers. It holds no cache and reads nothing.
type Floor struct {
	ns     string
	users  map[string][]string
	client client.Client
	// events writes the Events, nil without FloorOptions.Events; it reads
	// only the status of each answer, as ripple's recorder does.
	events rest.Interface
	work   chan floorJob
	errs   chan error
}

type floorJob struct {
	dep, cm, rv string
}

// StartFloor watches the ConfigMaps of ns until ctx ends.
func StartFloor(ctx context.Context, user *rest.Config, cs kubernetes.Interface, ns string, users map[string][]string, o FloorOptions) (*Floor, error) {
	cfg := rest.CopyConfig(user)
	cfg.QPS, cfg.Burst, cfg.UserAgent = o.QPS, o.Burst, FloorAgent
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, err
	}
	f := &Floor{ns: ns, users: users, client: c, work: make(chan floorJob, 1<<16), errs: make(chan error, 16)}
	if o.Events {
		ecfg := rest.CopyConfig(cfg)
		ecfg.ContentType = runtime.ContentTypeProtobuf
		ec, err := eventsv1client.NewForConfig(ecfg)
		if err != nil {
			return nil, err
		}
		f.events = ec.RESTClient()
	}
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	for i := 0; i < o.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range f.work {
				if err := f.patch(ctx, j); err != nil && ctx.Err() == nil {
					select {
					case f.errs <- err:
					default:
					}
				}
			}
		}()
	}
	go func() {
		defer func() { close(f.work); wg.Wait() }()
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					if ctx.Err() == nil {
						select {
						case f.errs <- fmt.Errorf("the floor's ConfigMap watch closed"):
						default:
						}
					}
					return
				}
				if ev.Type != watch.Modified {
					continue
				}
				cm := ev.Object.(*corev1.ConfigMap)
				for _, d := range f.users[cm.Name] {
					f.work <- floorJob{dep: d, cm: cm.Name, rv: cm.ResourceVersion}
				}
			}
		}
	}()
	return f, nil
}

// Err returns an error the floor ran into, if any.
func (f *Floor) Err() error {
	select {
	case err := <-f.errs:
		return err
	default:
		return nil
	}
}

// patch writes what ripple writes on a rollout: a record on the metadata and
// a digest on the pod template, in one merge patch, then, with Events, the
// Event.
func (f *Floor) patch(ctx context.Context, j floorJob) error {
	sum := sha256.Sum256([]byte(j.cm + "/" + j.rv))
	digest := hex.EncodeToString(sum[:16])
	record := "key=floor;at=" + strconv.FormatInt(time.Now().Unix(), 10) + ";ConfigMap/" + j.cm + "=" + digest[:16]
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{FloorRecordAnnotation: record}},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"annotations": map[string]string{FloorAnnotation: digest}},
		}},
	})
	if err != nil {
		return err
	}
	obj := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: j.dep}}
	if err := f.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body), client.FieldOwner("ripple-floor")); err != nil || f.events == nil {
		return err
	}
	return f.events.Post().Namespace(f.ns).Resource("events").Body(rolledEvent(obj, j.cm)).Do(ctx).Error()
}

// rolledEvent is an Event like the one ripple writes on a rollout of d.
func rolledEvent(d *appsv1.Deployment, cm string) *eventsv1.Event {
	now := time.Now()
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "." + strconv.FormatInt(now.UnixNano(), 16)},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: "ripple-floor",
		ReportingInstance:   "ripple-floor",
		Action:              "Reload",
		Reason:              "Reloaded",
		Regarding: corev1.ObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Namespace: d.Namespace, Name: d.Name,
			UID: d.UID, ResourceVersion: d.ResourceVersion},
		Note: "Rolled because ConfigMap " + cm + " changed",
		Type: corev1.EventTypeNormal,
	}
}
