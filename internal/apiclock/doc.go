// Package apiclock tells the API server's time. ripple decides whether a
// ConfigMap or a workload was created after a record by comparing
// timestamps the API server wrote with the time of that record, so the
// record's time must come from the same clock, not from the clock of the
// machine ripple runs on, which may be minutes off.
package apiclock
