package target

import (
	"fmt"
	"slices"
	"strings"
)

// Join combines contract sets, for example a deployment's file and a demo
// target. No sets gives an empty Set; a name in two sets is an error.
func Join(sets ...*Set) (*Set, error) {
	out := &Set{byName: map[string]*Contract{}}
	for _, s := range sets {
		for _, name := range s.names {
			key := strings.ToLower(name)
			for have := range out.byName {
				if strings.ToLower(have) == key {
					return nil, fmt.Errorf("target %q is defined twice", name)
				}
			}
			out.byName[name] = s.byName[name]
			out.names = append(out.names, name)
		}
	}
	slices.Sort(out.names)
	return out, nil
}
