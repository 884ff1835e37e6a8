package annotations

import (
	"strings"
	"sync"
	"sync/atomic"
)

// A reconcile of a workload whose reload list holds regular expressions
// matches the list against every cached object of its kind in the
// namespace. Within maxListCost a hostile list takes milliseconds per name,
// so seconds per reconcile in a namespace of thousands of objects, and any
// change there queues the workload. A list that costs more than memoCost
// remembers its answer for each name instead: for one list, a name's answer
// never changes.
const (
	memoCost = 16
	// memoMaxBytes bounds the names remembered for all lists together.
	memoMaxBytes = 2 << 20
	// memoEntryBytes estimates a remembered name's bytes beside its text:
	// its key and its share of the map.
	memoEntryBytes = 64
)

// memos is shared by every list that remembers.
var memos = newMatchMemo(memoMaxBytes)

// memoIDs numbers the lists that remember, as keys of memos. A list
// compiled again, after the cache evicted it, starts with a new number.
var memoIDs atomic.Uint64

type memoKey struct {
	list uint64
	name string
}

// matchMemo maps a list's number and a name to the list's answer. Past
// maxBytes it starts over, which costs only the matching it saves, and its
// map is dropped so that its memory goes too.
type matchMemo struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	answers  map[memoKey]bool
}

func newMatchMemo(maxBytes int) *matchMemo {
	return &matchMemo{maxBytes: maxBytes, answers: map[memoKey]bool{}}
}

// match returns list's answer for name, calling match only for a name it
// has not remembered. match runs outside the lock: it is what is slow.
func (m *matchMemo) match(list uint64, name string, match func(string) bool) bool {
	m.mu.Lock()
	found, ok := m.answers[memoKey{list, name}]
	m.mu.Unlock()
	if ok {
		return found
	}
	found = match(name)
	size := len(name) + memoEntryBytes
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bytes+size > m.maxBytes {
		m.answers, m.bytes = map[memoKey]bool{}, 0
	}
	// A copy, so that the memo does not keep a cached object's memory alive.
	m.answers[memoKey{list, strings.Clone(name)}] = found
	m.bytes += size
	return found
}
