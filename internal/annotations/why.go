package annotations

import (
	"fmt"
	"strconv"

	"github.com/ripple-controller/ripple/internal/refs"
)

// Why says, in words, which annotation gave Policy.Tracks its verdict on
// an object of the kind, for a workload with these metadata and pod
// template annotations. ripple explain prints it beside the verdict.
func (k Keys) Why(v Verdict, kind refs.Kind, metadata, template map[string]string, autoReloadAll bool) string {
	kk := k.forKind(kind)
	ann, where := metadata, ""
	if k.fallsBack(kk, metadata) {
		ann, where = template, " on the pod template"
	}
	switch v {
	case VerdictIgnored:
		return fmt.Sprintf("the %s carries %s=true", kind, k.Ignore)
	case VerdictExcluded:
		return fmt.Sprintf("%s names it", kk.exclude)
	case VerdictReloadList:
		return fmt.Sprintf("%s%s names it", kk.reload, where)
	case VerdictSearch:
		return fmt.Sprintf("%s=true%s, and the %s carries %s=true", k.Search, where, kind, k.Match)
	case VerdictAuto:
		for _, key := range []string{k.Auto, kk.auto} {
			if b, _ := strconv.ParseBool(ann[key]); b {
				return fmt.Sprintf("%s=%s%s", key, ann[key], where)
			}
		}
		return "--auto-reload-all"
	}
	return fmt.Sprintf("no annotation opts the workload in to %s changes", kind)
}
