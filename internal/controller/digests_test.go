package controller

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/refs"
)

// concurrentLists is a reader whose LISTs, of nothing, take a while, and
// which counts how many ran at once.
type concurrentLists struct {
	client.Reader
	mu        sync.Mutex
	now, most int
}

func (c *concurrentLists) List(context.Context, client.ObjectList, ...client.ListOption) error {
	c.mu.Lock()
	c.now++
	c.most = max(c.most, c.now)
	c.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	c.mu.Lock()
	c.now--
	c.mu.Unlock()
	return nil
}

// TestPrefetch_OneListWithDataAtATime: reconciles of workloads in several
// namespaces, each under a reload list that matches many ConfigMaps, would
// otherwise each hold a page of data at once.
func TestPrefetch_OneListWithDataAtATime(t *testing.T) {
	reader := &concurrentLists{}
	d := newDigests(reader, time.Now)
	var wg sync.WaitGroup
	for i := range 4 {
		ns := fmt.Sprintf("team-%d", i)
		var metas []client.Object
		for j := range bulkMin {
			metas = append(metas, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint(j),
				UID: types.UID(fmt.Sprintf("%s-%d", ns, j)), ResourceVersion: "1"}})
		}
		wg.Go(func() {
			if err := d.prefetch(context.Background(), refs.ConfigMap, ns, nil, metas); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if most := reader.most; most != 1 {
		t.Errorf("%d LISTs ran at once, want 1", most)
	}
}

// pagedConfigMaps serves one page of ConfigMaps, once released, and counts
// the LISTs.
type pagedConfigMaps struct {
	client.Reader
	items   []corev1.ConfigMap
	started chan struct{}
	release chan struct{}
	lists   atomic.Int32
}

func (p *pagedConfigMaps) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	if p.lists.Add(1) == 1 {
		close(p.started)
	}
	<-p.release
	list.(*corev1.ConfigMapList).Items = p.items
	return nil
}

// TestPrefetch_ASharedListServesEveryReconcileThatJoinedIt: two workloads
// of one namespace under different reload lists want different objects;
// the one that joins the other's LIST gets its own from it too.
func TestPrefetch_ASharedListServesEveryReconcileThatJoinedIt(t *testing.T) {
	reader := &pagedConfigMaps{started: make(chan struct{}), release: make(chan struct{})}
	var a, b []client.Object
	for i := range 2 * bulkMin {
		cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprint(i), UID: types.UID(fmt.Sprint(i)), ResourceVersion: "1"}}
		reader.items = append(reader.items, cm)
		meta := &metav1.PartialObjectMetadata{ObjectMeta: cm.ObjectMeta}
		if i < bulkMin {
			a = append(a, meta)
		} else {
			b = append(b, meta)
		}
	}
	d := newDigests(reader, time.Now)
	var wg sync.WaitGroup
	for _, metas := range [][]client.Object{a, b} {
		wg.Go(func() {
			if err := d.prefetch(context.Background(), refs.ConfigMap, "team", nil, metas); err != nil {
				t.Error(err)
			}
		})
		<-reader.started
	}
	for {
		d.mu.Lock()
		n := len(d.wanted["team"])
		d.mu.Unlock()
		if n == 2*bulkMin {
			break
		}
		runtime.Gosched()
	}
	close(reader.release)
	wg.Wait()
	if got := len(d.unknown(append(a, b...))); got != 0 || reader.lists.Load() != 1 {
		t.Errorf("%d digests unknown after %d LISTs, want none after one", got, reader.lists.Load())
	}
}

// sizedConfigMaps serves n ConfigMaps, the first small of 1 KiB each and
// the rest of size bytes, a page at a time as the API server does, and
// keeps the data of the largest page.
type sizedConfigMaps struct {
	client.Reader
	n, small, size int
	lists          int
	maxBytes       int
}

func (s *sizedConfigMaps) sizeOf(i int) int {
	if i < s.small {
		return 1 << 10
	}
	return s.size
}

func (s *sizedConfigMaps) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	from := 0
	if o.Continue != "" {
		from, _ = strconv.Atoi(o.Continue)
	}
	to := min(from+int(o.Limit), s.n)
	cms := list.(*corev1.ConfigMapList)
	bytes := 0
	for i := from; i < to; i++ {
		cms.Items = append(cms.Items, corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprint(i), UID: types.UID(fmt.Sprint(i)), ResourceVersion: "1"},
			Data:       map[string]string{"k": strings.Repeat("x", s.sizeOf(i))}})
		bytes += s.sizeOf(i)
	}
	if to < s.n {
		cms.Continue = strconv.Itoa(to)
	}
	s.lists++
	s.maxBytes = max(s.maxBytes, bytes)
	return nil
}

// TestPrefetch_PagesHoldAFewMiBWhateverTheConfigMapsSize: a page of the
// largest ConfigMaps must not hold 100 MiB, even after small ones; a
// namespace of small ones still reads 25 to a page.
func TestPrefetch_PagesHoldAFewMiBWhateverTheConfigMapsSize(t *testing.T) {
	tests := []struct {
		name           string
		small, size, n int
		maxBytes, most int
	}{
		{"ConfigMaps of 1 MiB, Helm releases say", 0, 1 << 20, 300, 25 << 20, 300},
		{"small ConfigMaps, then Helm releases of 1 MiB", 100, 1 << 20, 300, 25 << 20, 300},
		{"ConfigMaps of 200 KiB", 0, 200 << 10, 300, 5 << 20, 300},
		{"ConfigMaps of 2 KiB", 0, 2 << 10, 1000, 1 << 20, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reader := &sizedConfigMaps{n: tt.n, small: tt.small, size: tt.size}
			var metas []client.Object
			for i := range tt.n {
				metas = append(metas, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprint(i),
					UID: types.UID(fmt.Sprint(i)), ResourceVersion: "1"}})
			}
			d := newDigests(reader, time.Now)
			if err := d.prefetch(context.Background(), refs.ConfigMap, "team", nil, metas); err != nil {
				t.Fatal(err)
			}
			if got := len(d.unknown(metas)); got != 0 {
				t.Fatalf("%d digests unknown after the LIST", got)
			}
			if reader.maxBytes > tt.maxBytes || reader.lists > tt.most {
				t.Errorf("largest page %d KiB in %d LISTs, want at most %d KiB in at most %d", reader.maxBytes>>10, reader.lists, tt.maxBytes>>10, tt.most)
			}
		})
	}
}
