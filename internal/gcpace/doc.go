// Package gcpace paces Go's garbage collector by the size of ripple's live
// heap.
//
// Go's default, GOGC=100, lets the heap grow to twice what is live before
// it collects. On a small cluster ripple's live heap is a few MiB: a
// collection then costs well under a millisecond of CPU, and the doubling
// is a third of the process's memory. On a large cluster collections cost
// more and the default trade is the right one. So after every collection
// ripple sets GOGC to 25 while the live heap is at most 12 MiB, to 100 from
// 24 MiB on, and along a straight line between. A GOGC set in the
// environment wins: ripple then leaves the collector alone.
package gcpace
