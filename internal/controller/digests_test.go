package controller

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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
	d := newDigests(reader)
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
