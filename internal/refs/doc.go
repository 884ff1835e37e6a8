// Package refs finds the ConfigMaps and Secrets that a pod spec uses: through
// volumes (plain and projected) and through env and envFrom, in containers,
// init containers and ephemeral containers.
package refs
