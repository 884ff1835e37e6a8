package controller

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// view is what ripple needs of one version of a workload: its policy, what
// its pod spec references and its record. views.of computes it once per
// version, and the index, the predicates and Reconcile read the same one.
// It is shared, so nothing may change it.
type view struct {
	version string
	// policy holds the workload's own mistakes in Problems; those of the
	// ConfigMaps and Secrets it uses are found by Reconcile.
	policy     annotations.Policy
	referenced map[refs.Ref]bool
	// record is the decoded Recorded annotation, when hasRecord and
	// recordErr is nil.
	record    record
	hasRecord bool
	recordErr error
	// strategy is how the workload rolls, for types that offer a choice.
	strategy string
	// templateRef names the workload of the type's TemplateSource whose pod
	// template the workload's pods are made from, when not its own: then
	// referenced is empty here, and Reconcile reads that template
	// (borrowed). unfollowable says why a reference cannot be followed.
	templateRef, unfollowable string
	// reloadStrategy is how a rollout stamps the pod template, one of
	// workload.ReloadStrategies.
	reloadStrategy string
	// pausePeriod is how long a change pauses the workload; 0 for none.
	pausePeriod time.Duration
	// minInterval is the least time between two of its rollouts.
	minInterval time.Duration
	// precise says the workload rolls only when a key it reads changes;
	// usedKeys holds, for each object its pod spec reads only some keys
	// of, those keys (refs.KeysUsed), whatever precise says, so that a
	// record written under the other choice can still be compared.
	precise  bool
	usedKeys map[refs.Ref][]string
	// paused says ripple paused the workload at pausedAt; pauseErr says
	// when is unreadable, which ends the pause.
	paused   bool
	pausedAt time.Time
	pauseErr error
}

// interesting reports whether a workload's events are worth a reconcile: it
// opted in, was recorded, or carries a mistake to report. Most workloads in
// a cluster are none of these.
func (v *view) interesting() bool {
	return v.hasRecord || v.policy.OptedIn() || len(v.policy.Problems) > 0 || v.paused
}

// ownRecord reports whether the workload's record is one ripple could have
// written; anything else (removed, hand-edited) must be recorded again.
func (v *view) ownRecord() bool { return v.hasRecord && v.recordErr == nil }

// viewCacheSize bounds the views kept per workload type. The index, the
// predicates and the reconcile of a workload event read one version within
// moments, so a few hundred suffice; a workload read after its view was
// evicted has it computed again. Keeping one view per workload cost 1.5 KiB
// each in the bench (8 MiB more at 5,000 Deployments).
const viewCacheSize = 256

// views computes and keeps the views of one workload type.
type views struct {
	typ workload.Type
	// opts gives the defaults of every workload: --reload-strategy,
	// --pause-period, --min-rollout-interval, --key-precision, and
	// --enable-pod-refresh, without which a workload that asks for the
	// refresh strategy is told, and rolls by the default.
	opts *options.Options
	// strategy is the default of the type's Strategy, given by its flag.
	strategy string
	cache    *lru.Cache // UID -> *view
}

func newViews(typ workload.Type, opts *options.Options) *views {
	return &views{typ: typ, opts: opts, strategy: opts.StrategyOf(typ), cache: lru.New(viewCacheSize)}
}

// of returns the view of the object at its resourceVersion, or nil when it
// is not of the views' type.
func (vs *views) of(obj client.Object) *view {
	uid, version := obj.GetUID(), obj.GetResourceVersion()
	if cached, ok := vs.cache.Get(uid); ok {
		if v := cached.(*view); v.version == version && version != "" {
			return v
		}
	}
	v := vs.compute(obj)
	if v != nil && uid != "" {
		vs.cache.Add(uid, v)
	}
	return v
}

func (vs *views) compute(obj client.Object) *view {
	tmpl := vs.typ.Template(obj)
	if tmpl == nil {
		return nil
	}
	v := &view{
		version: obj.GetResourceVersion(),
		policy:  vs.opts.Keys.Parse(obj.GetAnnotations(), tmpl.Annotations, vs.opts.AutoReloadAll),
	}
	v.referenced, v.usedKeys = references(&tmpl.Spec)
	if vs.typ.TemplateRef != nil {
		var err error
		if v.templateRef, err = vs.typ.TemplateRef(obj); err != nil {
			v.unfollowable = err.Error()
		}
	}
	v.strategy = vs.strategyOf(obj, &v.policy)
	v.reloadStrategy, v.pausePeriod = vs.rolling(obj.GetAnnotations(), &v.policy)
	v.precise = vs.precision(obj.GetAnnotations(), &v.policy)
	var problem *annotations.Problem
	if v.minInterval, problem = annotations.Period(obj.GetAnnotations(), annotations.MinRolloutInterval, vs.opts.MinRolloutInterval); problem != nil {
		v.policy.Problems = append(v.policy.Problems, *problem)
	}
	v.pausedAt, v.paused, v.pauseErr = annotations.PausedSince(obj.GetAnnotations(), vs.opts.Keys.PausedAt)
	var raw string
	raw, v.hasRecord = obj.GetAnnotations()[annotations.Recorded]
	if v.hasRecord {
		v.record, v.recordErr = decodeRecord(raw)
	}
	return v
}

// references returns what a pod spec uses: each object, and the keys of
// those it reads only some keys of.
func references(spec *corev1.PodSpec) (referenced map[refs.Ref]bool, usedKeys map[refs.Ref][]string) {
	referenced = map[refs.Ref]bool{}
	for _, ref := range refs.FromPodSpec(spec) {
		referenced[ref] = true
		if keys, all := refs.KeysUsed(spec, ref); !all {
			if usedKeys == nil {
				usedKeys = map[refs.Ref][]string{}
			}
			usedKeys[ref] = keys
		}
	}
	return referenced, usedKeys
}

// strategyOf reads the workload's choice of strategy; a mistaken value is
// reported and the default applies.
func (vs *views) strategyOf(obj client.Object, policy *annotations.Policy) string {
	st := vs.typ.Strategy
	if st == nil {
		return ""
	}
	value, problem := annotations.Choice(obj.GetAnnotations(), st.Annotation, st.Values, vs.strategy)
	if problem != nil {
		policy.Problems = append(policy.Problems, *problem)
	}
	return value
}

// rolling reads the workload's reload strategy and pause period; a
// mistaken value is reported and the default applies. A pause period on a
// type that cannot pause is reported once it is asked for by annotation.
func (vs *views) rolling(meta map[string]string, policy *annotations.Policy) (string, time.Duration) {
	strategy, problem := annotations.Choice(meta, annotations.ReloadStrategy, workload.ReloadStrategies, vs.opts.ReloadStrategy)
	if problem != nil {
		policy.Problems = append(policy.Problems, *problem)
	}
	if strategy == workload.Refresh && !vs.opts.EnablePodRefresh {
		policy.Problems = append(policy.Problems, annotations.Problem{Annotation: annotations.ReloadStrategy, Value: strategy,
			Reason: fmt.Sprintf("needs --enable-pod-refresh; %q applies", vs.opts.ReloadStrategy)})
		strategy = vs.opts.ReloadStrategy
	}
	if vs.typ.Pause == workload.NoPause {
		if _, asked := meta[vs.opts.Keys.PausePeriod]; asked {
			policy.Problems = append(policy.Problems, annotations.Problem{Annotation: vs.opts.Keys.PausePeriod,
				Value: annotations.Shorten(meta[vs.opts.Keys.PausePeriod], 128), Reason: "applies only to Deployments, StatefulSets and DaemonSets"})
		}
		return strategy, 0
	}
	period, problem := annotations.Period(meta, vs.opts.Keys.PausePeriod, vs.opts.PausePeriod)
	if problem != nil {
		policy.Problems = append(policy.Problems, *problem)
	}
	return strategy, period
}

// precision reads the workload's KeyPrecision annotation; a mistaken value
// is reported and the default applies.
func (vs *views) precision(meta map[string]string, policy *annotations.Policy) bool {
	def := strconv.FormatBool(vs.opts.KeyPrecision)
	value, problem := annotations.Choice(meta, annotations.KeyPrecision, []string{"false", "true"}, def)
	if problem != nil {
		policy.Problems = append(policy.Problems, *problem)
	}
	return value == "true"
}

// indexValues is the refIndex function of the views' type.
func (vs *views) indexValues(obj client.Object) []string {
	if v := vs.of(obj); v != nil {
		return indexKeys(obj.GetNamespace(), v)
	}
	return nil
}

// templateRefValues is the templateRefIndex function of the views' type.
func (vs *views) templateRefValues(obj client.Object) []string {
	if v := vs.of(obj); v != nil && v.templateRef != "" {
		return []string{v.templateRef}
	}
	return nil
}
