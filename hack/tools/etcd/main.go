// Command etcd is the etcd server at the version pinned by this module's
// go.mod. etcd publishes no installable main package at a module version, so
// this wrapper calls the same entry point as etcd's own binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
