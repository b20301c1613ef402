package kernel

import (
	"fmt"
	"strings"

	"github.com/contractflow/contractflow/platform/httpx"
)

// The checks below catch two modules claiming one thing. Without them the
// second claimant would silently win (a configuration section, a route) or
// two modules would share policies neither fully owns (a menu key). Each is
// a start-up error naming both modules.

// configSections collects the configuration sections of every compiled-in
// module, enabled or not (both are decoded). Keys are compared ignoring case,
// as configuration keys are.
func configSections(mods []Module) (map[string]any, error) {
	sections := map[string]any{}
	owner := map[string]string{}
	var problems []string
	for _, m := range mods {
		c, ok := m.(Configurer)
		if !ok {
			continue
		}
		key, target := c.ConfigSection()
		name := m.Info().Name
		if prev, dup := owner[strings.ToLower(key)]; dup {
			problems = append(problems, fmt.Sprintf("modules %s and %s both claim the configuration section %q", prev, name, key))
			continue
		}
		owner[strings.ToLower(key)] = name
		sections[key] = target
	}
	return sections, joinProblems(problems)
}

// checkMenus refuses a menu key declared twice, over every compiled-in
// module: a key's policies belong to one module, whichever are enabled.
func checkMenus(mods []Module) error {
	owner := map[string]string{}
	var problems []string
	for _, m := range mods {
		mp, ok := m.(MenuProvider)
		if !ok {
			continue
		}
		name := m.Info().Name
		for _, menu := range mp.Menus() {
			if menu.Key == "" {
				problems = append(problems, fmt.Sprintf("module %s declares a menu entry without a key", name))
				continue
			}
			if prev, dup := owner[menu.Key]; dup {
				problems = append(problems, fmt.Sprintf("modules %s and %s both declare the menu key %q", prev, name, menu.Key))
				continue
			}
			owner[menu.Key] = name
		}
	}
	return joinProblems(problems)
}

// routeKey is what makes two routes the same to the router: the method and
// the path, ignoring case, a trailing slash and the names of parameters.
func routeKey(r httpx.Route) string {
	segs := strings.Split(strings.TrimSuffix(strings.ToLower(r.Path), "/"), "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = ":"
		}
	}
	return strings.ToUpper(r.Method) + " " + strings.Join(segs, "/")
}

func joinProblems(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(problems, "; "))
}
