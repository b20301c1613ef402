package kernel

import (
	"fmt"
	"sort"
	"strings"
)

// order sorts modules so each comes after the modules it requires; among
// the modules ready at each step the first by name goes next, so the order
// is the same on every start. It fails on a requirement that is not
// compiled in and on a cycle.
func order(mods []Module) ([]Module, error) {
	byName := make(map[string]Module, len(mods))
	for _, m := range mods {
		byName[m.Info().Name] = m
	}
	for _, m := range mods {
		for _, r := range m.Info().Requires {
			if _, ok := byName[r]; !ok {
				return nil, fmt.Errorf("module %s requires module %s, which is not compiled in", m.Info().Name, r)
			}
		}
	}
	placed := map[string]bool{}
	out := make([]Module, 0, len(mods))
	for len(out) < len(byName) {
		var ready []string
		for name, m := range byName {
			if !placed[name] && allPlaced(m.Info().Requires, placed) && allPlaced(compiledIn(m.Info().Uses, byName), placed) {
				ready = append(ready, name)
			}
		}
		if len(ready) == 0 {
			var stuck []string
			for name := range byName {
				if !placed[name] {
					stuck = append(stuck, name)
				}
			}
			sort.Strings(stuck)
			return nil, fmt.Errorf("module dependency cycle among: %s", strings.Join(stuck, ", "))
		}
		sort.Strings(ready)
		placed[ready[0]] = true
		out = append(out, byName[ready[0]])
	}
	return out, nil
}

// compiledIn keeps the names of modules that exist; a used module that is
// not compiled in simply is not there.
func compiledIn(names []string, byName map[string]Module) []string {
	var out []string
	for _, n := range names {
		if _, ok := byName[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

func allPlaced(names []string, placed map[string]bool) bool {
	for _, n := range names {
		if !placed[n] {
			return false
		}
	}
	return true
}

// checkEnabled fails when an enabled module requires a disabled one, naming
// both and the key that turns the required one back on.
func checkEnabled(ordered []Module, enabled func(string) bool) error {
	var problems []string
	for _, m := range ordered {
		info := m.Info()
		if !enabled(info.Name) {
			continue
		}
		for _, r := range info.Requires {
			if !enabled(r) {
				problems = append(problems, fmt.Sprintf(
					"module %s is enabled but requires module %s, which is disabled (set modules.%s.enabled: true or disable %s)",
					info.Name, r, r, info.Name))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}
