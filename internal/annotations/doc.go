// Package annotations names every annotation ripple reads or writes and turns
// a workload's annotations into a Policy: which ConfigMaps and Secrets may
// trigger a rollout of that workload.
//
// The names default to stakater/Reloader's so that ripple is a drop-in
// replacement; each name a user sets on objects can be renamed through Keys.
package annotations
