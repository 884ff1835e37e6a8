package annotations

import (
	"container/list"
	"sync"
)

// Bounds of the cache of parsed reload lists. Most workloads share a few
// short lists; the bounds keep many distinct or huge ones from growing it.
const (
	cacheMaxLists = 4096
	cacheMaxBytes = 4 << 20
)

// lists is shared by every caller: the index, the predicates and Reconcile
// parse the same workload's lists on every event, and now compile each
// distinct value once.
var lists = newListCache(cacheMaxLists, cacheMaxBytes)

// listCache is a least-recently-used cache of parsed lists keyed by the
// annotation value, bounded in entries and in estimated bytes.
type listCache struct {
	mu       sync.Mutex
	maxLists int
	maxBytes int
	bytes    int
	order    *list.List // of *cachedList, most recently used first
	byValue  map[string]*list.Element
}

type cachedList struct {
	value  string
	parsed parsedList
}

func newListCache(maxLists, maxBytes int) *listCache {
	return &listCache{maxLists: maxLists, maxBytes: maxBytes, order: list.New(), byValue: map[string]*list.Element{}}
}

// get returns the parsed list, compiling it on a miss. Compiling happens
// outside the lock: two callers may compile the same value at once, and
// the first one stored wins.
func (c *listCache) get(value string) parsedList {
	if parsed, ok := c.lookup(value); ok {
		return parsed
	}
	return c.store(value, compileList(value))
}

func (c *listCache) lookup(value string) (parsedList, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byValue[value]
	if !ok {
		return parsedList{}, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cachedList).parsed, true
}

func (c *listCache) store(value string, parsed parsedList) parsedList {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byValue[value]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*cachedList).parsed
	}
	if parsed.size > c.maxBytes {
		return parsed
	}
	c.byValue[value] = c.order.PushFront(&cachedList{value: value, parsed: parsed})
	c.bytes += parsed.size
	for c.order.Len() > c.maxLists || c.bytes > c.maxBytes {
		c.evict(c.order.Back())
	}
	return parsed
}

func (c *listCache) evict(el *list.Element) {
	cl := c.order.Remove(el).(*cachedList)
	delete(c.byValue, cl.value)
	c.bytes -= cl.parsed.size
}
