package manager

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// newMapper returns controller-runtime's REST mapper behind a memory of
// the mappings it found. Every write ripple makes asks for its kind's
// mapping, and controller-runtime's mapper builds the answer anew each time
// through three layers of mappers: in the bench's fan-out that was a tenth
// of everything ripple allocated.
func newMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the REST mapper: %w", err)
	}
	return &memoMapper{RESTMapper: m, found: map[mappingKey]*meta.RESTMapping{}}, nil
}

// memoMapper remembers the mappings found, never a miss, so that a kind
// whose API appears later is still looked up. A found mapping stays valid
// as long as its API is served, which is also how long controller-runtime's
// mapper keeps it.
type memoMapper struct {
	meta.RESTMapper
	mu    sync.RWMutex
	found map[mappingKey]*meta.RESTMapping
}

type mappingKey struct {
	gk       schema.GroupKind
	versions string
}

func (m *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := mappingKey{gk: gk, versions: strings.Join(versions, ",")}
	m.mu.RLock()
	found, ok := m.found[key]
	m.mu.RUnlock()
	if ok {
		return found, nil
	}
	found, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.found[key] = found
	m.mu.Unlock()
	return found, nil
}
