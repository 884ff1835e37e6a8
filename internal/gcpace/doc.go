// Package gcpace paces Go's garbage collector by the size of ripple's live
// heap.
//
// Go's default, GOGC=100, lets the heap grow to twice what is live before
// it collects. On a small cluster ripple's live heap is a few MiB: a
// collection then costs well under a millisecond of CPU, and the doubling
// is a third of the process's memory. On a large cluster the doubling is
// most of the process's memory, while ripple, idle between changes,
// allocates little. So after every collection ripple sets GOGC to 25 while
// the live heap is at most 8 MiB, to 100 at 16 MiB, along a straight line
// between, keeps 100 up to 24 MiB, and above 24 MiB sets what keeps the
// headroom at 24 MiB, never below 25: collections come more often while the
// caches fill, and the peak stays near the live heap. A thousand workloads
// make a live heap of about 15 MiB; there a rollout wave allocates fast,
// and at the GOGC of 44 the line once gave it, collections took a fifth of
// ripple's CPU in the bench's fan-out (scenario d). A GOGC set in the
// environment wins: ripple then leaves the collector alone.
package gcpace
