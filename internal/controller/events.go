package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/lru"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/alert"
)

const (
	// eventDelay is the longest an Event waits behind workload writes.
	eventDelay = 10 * time.Second
	// eventQueue is the most Events waiting to be written; more are
	// dropped, and counted.
	eventQueue = 10000
	// eventRepeat is how long an Event that repeats one written
	// (repeatKeyOf) is not written again: a workload with a mistaken
	// annotation is reported once, however often it is reconciled.
	// recentEvents bounds what is remembered for that.
	eventRepeat  = 6 * time.Minute
	recentEvents = 4096
	// eventTries bounds the writes of one Event the API server did not answer.
	eventTries = 3
)

// recorder writes ripple's Events (events.k8s.io/v1) one at a time, behind
// its workload writes: once none is in flight, or once the Event is
// eventDelay old. A change that rolls 1,000 workloads would otherwise put
// 1,000 Event writes before the API server at the same time as the
// rollouts they report, each costing it about as much as a rollout; in the
// bench's fan-out (scenario d) writing them behind brought the last of
// 1,000 rollouts from 1.9x the floor to 1.7x.
//
// It replaces client-go's broadcaster, which writes each Event from a
// goroutine of its own and remembers every Event for six minutes to count
// repeats: a wave of 20,000 rollouts meant 20,000 goroutines and tens of
// MiB held. Here the waiting Events are at most eventQueue, and the
// repeats remembered at most recentEvents.
type recorder struct {
	// client is the events.k8s.io REST client: a write asks nothing of
	// the API server's answer but its status, which the typed client
	// would decode into an Event (a fifth of an Event's CPU in a profile).
	client   rest.Interface
	scheme   *runtime.Scheme
	instance string
	writes   *writes
	queue    chan *eventsv1.Event
	log      logr.Logger

	recent *recentSet
}

// protobufConfig is the manager's client configuration for a typed client
// of built-in types, sending protobuf as controller-runtime's clients do.
func protobufConfig(mgr ctrl.Manager) *rest.Config {
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.ContentType = runtime.ContentTypeProtobuf
	return cfg
}

// newRecorder returns the recorder of ripple's Events, which mgr runs.
func newRecorder(mgr ctrl.Manager, w *writes) (*recorder, error) {
	cl, err := eventsv1client.NewForConfigAndClient(protobufConfig(mgr), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("creating the Events client: %w", err)
	}
	host, _ := os.Hostname()
	r := &recorder{client: cl.RESTClient(), scheme: mgr.GetScheme(), instance: "ripple-" + host, writes: w,
		queue: make(chan *eventsv1.Event, eventQueue), log: mgr.GetLogger().WithName("events"), recent: newRecentSet(recentEvents, eventRepeat)}
	if err := mgr.Add(r); err != nil {
		return nil, fmt.Errorf("adding the Event recorder: %w", err)
	}
	return r, nil
}

// NeedLeaderElection is true: only the leader reconciles, and the manager
// stops the recorder with the controllers, not before them, and waits for
// it, so that the Events of their last reconciles are written (Start).
func (r *recorder) NeedLeaderElection() bool { return true }

// Eventf queues an Event about regarding, unless it repeats one queued
// within eventRepeat.
func (r *recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	ref, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		r.log.Error(err, "Cannot refer to the object of an Event", "reason", reason)
		return
	}
	now := time.Now()
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: util.GenerateEventName(ref.Name, now.UnixNano()), Namespace: ref.Namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: "ripple",
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Note:                fmt.Sprintf(note, args...),
		Type:                eventtype,
	}
	if related != nil {
		if rel, err := reference.GetReference(r.scheme, related); err == nil {
			ev.Related = rel
		}
	}
	if ev.Namespace == "" {
		ev.Namespace = metav1.NamespaceDefault
	}
	if r.repeats(ev, now) {
		return
	}
	r.log.V(1).Info("Emitting an Event", "type", eventtype, "reason", reason, "object", ref.Kind+" "+ref.Namespace+"/"+ref.Name, "note", ev.Note)
	select {
	case r.queue <- ev:
	default:
		// Not written, so a repeat is not one.
		r.recent.forget(repeatKeyOf(ev))
		eventsDroppedTotal.Inc()
	}
}

// repeats reports whether an Event with the same object version, reason,
// action and note was queued within eventRepeat, and remembers this one.
func (r *recorder) repeats(ev *eventsv1.Event, now time.Time) bool {
	return !r.recent.first(repeatKeyOf(ev), now)
}

// recentSet remembers what was said lately about one version of an object
// (an Event, a log line): each key for window, at most size keys, the
// least recently used forgotten first.
type recentSet struct {
	mu     sync.Mutex
	seen   *lru.Cache
	window time.Duration
}

func newRecentSet(size int, window time.Duration) *recentSet {
	return &recentSet{seen: lru.New(size), window: window}
}

// first reports whether key was not said within the window before now,
// and remembers it as said now.
func (s *recentSet) first(key any, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at, ok := s.seen.Get(key); ok && now.Sub(at.(time.Time)) < s.window {
		return false
	}
	s.seen.Add(key, now)
	return true
}

func (s *recentSet) forget(key any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen.Remove(key)
}

type repeatKey struct {
	uid                           types.UID
	version, reason, action, note string
}

// repeatKeyOf tells a repeat of ev. Most Events are about one version of
// the object (a rollout, a failure, a timeout), which the next change
// moves. A mistake in the workload's annotations is said at each of its
// reconciles, and a Deployment's status moves its version many times a
// rollout: that one is a repeat whatever the version.
func repeatKeyOf(ev *eventsv1.Event) repeatKey {
	k := repeatKey{uid: ev.Regarding.UID, version: ev.Regarding.ResourceVersion, reason: ev.Reason, action: ev.Action, note: ev.Note}
	if ev.Reason == ReasonInvalidAnnotation || ev.Reason == ReasonReloadSkipped && ev.Type == corev1.EventTypeWarning {
		k.version = ""
	}
	return k
}

// Start writes queued Events until ctx ends, then those queued until the
// queue stays empty for a while (alert.Drain): the Events of reconciles
// that finish as ripple stops are written too.
func (r *recorder) Start(ctx context.Context) error {
	writeCtx, cancel := alert.DrainContext(ctx, alert.DrainFor)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			alert.Drain(writeCtx, r.queue, r.writes.done, func(ev *eventsv1.Event) { r.write(writeCtx, ev) })
			return nil
		case ev := <-r.queue:
			r.behind(ctx, ev)
			r.write(writeCtx, ev)
		}
	}
}

// behind waits until no workload write is in flight, ev is eventDelay
// old, or ctx ends.
func (r *recorder) behind(ctx context.Context, ev *eventsv1.Event) {
	late := time.NewTimer(time.Until(ev.EventTime.Add(eventDelay)))
	defer late.Stop()
	select {
	case <-r.writes.done():
	case <-late.C:
	case <-ctx.Done():
	}
}

// write creates ev, trying again a few times when the API server did not
// answer; an answer that refuses it is final.
func (r *recorder) write(ctx context.Context, ev *eventsv1.Event) {
	var err error
	for try := range eventTries {
		if try > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
		err = r.client.Post().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Error()
		var status apierrors.APIStatus
		if err == nil || errors.As(err, &status) {
			break
		}
	}
	if err != nil && ctx.Err() == nil {
		r.log.Error(err, "Cannot write an Event", "reason", ev.Reason, "object", ev.Regarding.Kind+" "+ev.Regarding.Namespace+"/"+ev.Regarding.Name)
	}
}

// writes counts the workload writes in flight.
type writes struct {
	mu sync.Mutex
	n  int
	// none is closed while no write is in flight.
	none chan struct{}
}

func newWrites() *writes {
	w := &writes{none: make(chan struct{})}
	close(w.none)
	return w
}

// start counts a write in flight; a nil writes counts nothing.
func (w *writes) start() {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.n == 0 {
		w.none = make(chan struct{})
	}
	w.n++
	w.mu.Unlock()
}

func (w *writes) end() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.n--
	if w.n == 0 {
		close(w.none)
	}
	w.mu.Unlock()
}

// done is closed once no write is in flight.
func (w *writes) done() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.none
}

// counted is a client whose writes are counted in writes.
type counted struct {
	client.Client
	writes *writes
}

func (c counted) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.writes.start()
	defer c.writes.end()
	return c.Client.Create(ctx, obj, opts...)
}

func (c counted) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.writes.start()
	defer c.writes.end()
	return c.Client.Update(ctx, obj, opts...)
}

func (c counted) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.writes.start()
	defer c.writes.end()
	return c.Client.Delete(ctx, obj, opts...)
}

func (c counted) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.writes.start()
	defer c.writes.end()
	return c.Client.Patch(ctx, obj, patch, opts...)
}
