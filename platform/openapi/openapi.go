// Package openapi assembles the service's OpenAPI 3.1 document from the
// platform's base (base.yaml) and one fragment per module, serves it with an
// embedded Swagger UI, and checks in tests that responses match it.
//
// A module keeps its fragment next to its handlers (embedded YAML) so the
// document changes in the same commit as the code; the kernel merges the
// fragments of the enabled modules, and the test harness checks every
// response against the result, so the document cannot drift from the code
// unnoticed.
package openapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
)

//go:embed base.yaml
var baseYAML []byte

// baseModule names the platform's own part in merge errors.
const baseModule = "platform"

// methods are the path-item keys that are operations, in document order.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// componentSections are the kinds of components a fragment may contribute.
var componentSections = []string{"schemas", "parameters", "responses", "requestBodies", "headers", "examples", "links", "callbacks", "pathItems"}

// fragmentKeys are the top-level keys a fragment may hold. openapi and info
// are accepted so a fragment can also be a standalone document for editors,
// and are otherwise ignored.
var fragmentKeys = []string{"openapi", "info", "paths", "components", "tags"}

// Builder merges module fragments into one document. It is not safe for
// concurrent use; the kernel builds the document once at start-up.
type Builder struct {
	doc        map[string]any
	paths      map[string]map[string]any // path → path item
	components map[string]map[string]any // section → name → component
	tags       []any
	modules    map[string]bool
	opOwner    map[string]string // "GET /api/x" → module
	pathOwner  map[string]string // path with parameter names erased → path as first written
	compOwner  map[string]string // "schemas/User" → module
	tagOwner   map[string]string
	pathAttrs  map[string]string // path → module that set its shared members (parameters, summary, …)
}

// New starts a document from the platform's base, with info.version set to
// version (the build's version; "dev" when empty).
func New(version string) (*Builder, error) {
	base, err := decode(baseYAML)
	if err != nil {
		return nil, fmt.Errorf("openapi: base document: %w", err)
	}
	if version == "" {
		version = "dev"
	}
	info, _ := base["info"].(map[string]any)
	if info == nil {
		return nil, errors.New("openapi: base document has no info")
	}
	info["version"] = version

	b := &Builder{
		doc:        base,
		paths:      map[string]map[string]any{},
		components: map[string]map[string]any{},
		modules:    map[string]bool{},
		opOwner:    map[string]string{},
		pathOwner:  map[string]string{},
		compOwner:  map[string]string{},
		tagOwner:   map[string]string{},
		pathAttrs:  map[string]string{},
	}
	// The base is merged like a fragment so its paths and components are
	// owned (and protected from redefinition) like any module's.
	if err := b.merge(baseModule, base, true); err != nil {
		return nil, fmt.Errorf("openapi: base document: %w", err)
	}
	return b, nil
}

// Add merges a module's fragment: a YAML or JSON document holding paths and
// optionally components (and tags). A fragment may $ref the base's
// components (e.g. #/components/responses/Unauthorized) and those of other
// modules. An operation (method and path) defined twice, or a component
// name defined twice with different content, is an error naming the module
// and the duplicate. Operations without tags are tagged with the module name
// so Swagger UI groups them by module.
func (b *Builder) Add(module string, fragment []byte) error {
	if strings.TrimSpace(module) == "" {
		return errors.New("openapi: fragment without a module name")
	}
	if module == baseModule {
		return fmt.Errorf("openapi: module name %q is reserved for the platform's base document", module)
	}
	if b.modules[module] {
		return fmt.Errorf("openapi: module %s: fragment added twice", module)
	}
	frag, err := decode(fragment)
	if err != nil {
		return fmt.Errorf("openapi: module %s: fragment: %w", module, err)
	}
	for _, k := range sortedKeys(frag) {
		if !slices.Contains(fragmentKeys, k) {
			return fmt.Errorf("openapi: module %s: fragment: unexpected top-level key %q (allowed: paths, components, tags)", module, k)
		}
	}
	if v, ok := frag["openapi"].(string); ok && !strings.HasPrefix(v, "3.1.") {
		return fmt.Errorf("openapi: module %s: fragment is OpenAPI %s; the service's document is 3.1", module, v)
	}
	if err := b.merge(module, frag, false); err != nil {
		return fmt.Errorf("openapi: module %s: %w", module, err)
	}
	b.modules[module] = true
	return nil
}

// merge adds the paths, components and tags of part, owned by module. It
// checks everything before changing anything, so a failed Add leaves the
// builder as it was.
func (b *Builder) merge(module string, part map[string]any, isBase bool) error {
	paths, err := asMap(part["paths"], "paths")
	if err != nil {
		return err
	}
	comps, err := asMap(part["components"], "components")
	if err != nil {
		return err
	}
	tags, err := asList(part["tags"], "tags")
	if err != nil {
		return err
	}

	// Check paths.
	items := map[string]map[string]any{}
	newPathKeys := map[string]string{}
	for _, p := range sortedKeys(paths) {
		if !strings.HasPrefix(p, "/") {
			return fmt.Errorf("path %q must start with /", p)
		}
		item, err := asObject(paths[p], "paths."+p)
		if err != nil {
			return err
		}
		items[p] = item
		key := templateKey(p)
		if prev, ok := b.pathOwner[key]; ok && prev != p {
			return fmt.Errorf("path %s is the same as %s (defined by %s) with other parameter names; use the same names", p, prev, b.ownerOfPath(prev))
		}
		if prev, ok := newPathKeys[key]; ok && prev != p {
			return fmt.Errorf("paths %s and %s differ only in parameter names", prev, p)
		}
		newPathKeys[key] = p
		existing := b.paths[p]
		for _, k := range sortedKeys(item) {
			if slices.Contains(methods, k) {
				opv, err := asObject(item[k], "paths."+p+"."+k)
				if err != nil {
					return err
				}
				op := strings.ToUpper(k) + " " + p
				// OpenAPI 3.1 makes responses optional, but an operation
				// without them would let every response pass the checks.
				if r, _ := opv["responses"].(map[string]any); len(r) == 0 {
					return fmt.Errorf("operation %s documents no responses", op)
				}
				if owner, ok := b.opOwner[op]; ok {
					return fmt.Errorf("duplicate operation %s (already defined by %s)", op, owner)
				}
				continue
			}
			if existing == nil {
				continue
			}
			if old, ok := existing[k]; ok && !reflect.DeepEqual(old, item[k]) {
				return fmt.Errorf("path %s: %q differs from the one defined by %s", p, k, b.pathAttrs[p])
			}
		}
	}

	// Check components.
	newComps := map[string]any{}
	for _, section := range sortedKeys(comps) {
		if section == "securitySchemes" && !isBase {
			return errors.New("components.securitySchemes: only the platform defines security schemes (use bearerAuth)")
		}
		if !isBase && !slices.Contains(componentSections, section) {
			return fmt.Errorf("components.%s: unknown component section", section)
		}
		entries, err := asMap(comps[section], "components."+section)
		if err != nil {
			return err
		}
		for _, name := range sortedKeys(entries) {
			key := section + "/" + name
			if owner, ok := b.compOwner[key]; ok {
				if !reflect.DeepEqual(b.components[section][name], entries[name]) {
					return fmt.Errorf("duplicate component #/components/%s with different content (already defined by %s)", key, owner)
				}
				continue
			}
			newComps[key] = entries[name]
		}
	}

	// Check tags.
	newTags := map[string]any{}
	for i, t := range tags {
		tm, err := asObject(t, fmt.Sprintf("tags[%d]", i))
		if err != nil {
			return err
		}
		name, _ := tm["name"].(string)
		if name == "" {
			return fmt.Errorf("tags[%d] has no name", i)
		}
		if owner, ok := b.tagOwner[name]; ok {
			if !reflect.DeepEqual(b.tagByName(name), tm) {
				return fmt.Errorf("duplicate tag %q with different content (already defined by %s)", name, owner)
			}
			continue
		}
		newTags[name] = tm
	}

	// Apply.
	for _, p := range sortedKeys(paths) {
		item := items[p]
		dst := b.paths[p]
		if dst == nil {
			dst = map[string]any{}
			b.paths[p] = dst
			b.pathOwner[templateKey(p)] = p
		}
		for k, v := range item {
			if slices.Contains(methods, k) {
				op := v.(map[string]any)
				if _, ok := op["tags"]; !ok && !isBase {
					op["tags"] = []any{module}
				}
				dst[k] = op
				b.opOwner[strings.ToUpper(k)+" "+p] = module
				continue
			}
			if _, ok := dst[k]; !ok {
				dst[k] = v
				if b.pathAttrs[p] == "" {
					b.pathAttrs[p] = module
				}
			}
		}
	}
	for key, v := range newComps {
		section, name, _ := strings.Cut(key, "/")
		if b.components[section] == nil {
			b.components[section] = map[string]any{}
		}
		b.components[section][name] = v
		b.compOwner[key] = module
	}
	for _, t := range tags {
		tm := t.(map[string]any)
		name := tm["name"].(string)
		if _, ok := newTags[name]; ok {
			b.tags = append(b.tags, tm)
			b.tagOwner[name] = module
			delete(newTags, name)
		}
	}
	return nil
}

// ownerOfPath names the module that defined an operation on path p.
func (b *Builder) ownerOfPath(p string) string {
	for _, m := range methods {
		if o, ok := b.opOwner[strings.ToUpper(m)+" "+p]; ok {
			return o
		}
	}
	return b.pathAttrs[p]
}

func (b *Builder) tagByName(name string) any {
	for _, t := range b.tags {
		if t.(map[string]any)["name"] == name {
			return t
		}
	}
	return nil
}

// Build returns the merged document as JSON after validating it with
// kin-openapi. Before validating, it adds to every operation the responses
// the platform's middleware can give whatever the handler does, unless the
// operation documents that status itself:
//   - 429 TooManyRequests and 500 InternalError on every operation;
//   - 401 Unauthorized on every operation that needs a token;
//   - 400 BadRequest, 413 PayloadTooLarge and 415 UnsupportedMediaType on
//     every operation with a request body.
//
// The health probes are exempt: they are not rate-limited and their errors
// are plain JSON.
func (b *Builder) Build() ([]byte, error) {
	out := maps.Clone(b.doc)
	paths := map[string]any{}
	for p, item := range b.paths {
		paths[p] = b.withPlatformResponses(p, item)
	}
	out["paths"] = paths
	comps := map[string]any{}
	for section, entries := range b.components {
		comps[section] = entries
	}
	out["components"] = comps
	if len(b.tags) > 0 {
		out["tags"] = b.tags
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("openapi: encode document: %w", err)
	}
	data := buf.Bytes()
	if _, err := load(data); err != nil {
		return nil, err
	}
	// The service keeps the document for its life: without the buffer's
	// spare capacity (up to as much again).
	return bytes.Clone(data), nil
}

// withPlatformResponses returns a copy of a path item whose operations carry
// the middleware's responses (see Build).
func (b *Builder) withPlatformResponses(path string, item map[string]any) map[string]any {
	out := maps.Clone(item)
	if strings.HasPrefix(path, "/health/") {
		return out
	}
	globalSecured := len(anyList(b.doc["security"])) > 0
	for _, m := range methods {
		op, ok := item[m].(map[string]any)
		if !ok {
			continue
		}
		op = maps.Clone(op)
		responses, _ := op["responses"].(map[string]any)
		responses = maps.Clone(responses)
		if responses == nil {
			// Leave it to validation to report the missing responses.
			out[m] = op
			continue
		}
		add := func(status, name string) {
			if _, ok := responses[status]; !ok {
				responses[status] = map[string]any{"$ref": "#/components/responses/" + name}
			}
		}
		add("429", "TooManyRequests")
		add("500", "InternalError")
		secured := globalSecured
		if s, ok := op["security"]; ok {
			secured = len(anyList(s)) > 0
		}
		if secured {
			add("401", "Unauthorized")
		}
		if _, ok := op["requestBody"]; ok {
			add("400", "BadRequest")
			add("413", "PayloadTooLarge")
			add("415", "UnsupportedMediaType")
		}
		op["responses"] = responses
		out[m] = op
	}
	return out
}

// load parses and validates a document with kin-openapi.
func load(doc []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	t, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: load document: %w", err)
	}
	if err := t.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	return t, nil
}

// Operation is one method on one path of a document.
type Operation struct {
	Method string // upper case, e.g. GET
	Path   string // OpenAPI form, e.g. /api/users/{id}
}

func (o Operation) String() string { return o.Method + " " + o.Path }

// Operations lists the operations of a document (JSON or YAML), sorted by
// path then method, so tests can compare them with the mounted routes.
func Operations(doc []byte) ([]Operation, error) {
	d, err := decode(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	paths, err := asMap(d["paths"], "paths")
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	var ops []Operation
	for _, p := range sortedKeys(paths) {
		item, err := asMap(paths[p], "paths."+p)
		if err != nil {
			return nil, fmt.Errorf("openapi: %w", err)
		}
		for _, m := range methods {
			if _, ok := item[m]; ok {
				ops = append(ops, Operation{Method: strings.ToUpper(m), Path: p})
			}
		}
	}
	return ops, nil
}

var (
	openapiParam = regexp.MustCompile(`\{([^{}/]+)\}`)
	fiberParam   = regexp.MustCompile(`:([A-Za-z0-9_]+)\??`)
)

// FiberPath converts an OpenAPI path template to a Fiber route path:
// /api/users/{id} → /api/users/:id.
func FiberPath(openapiPath string) string {
	return openapiParam.ReplaceAllString(openapiPath, ":$1")
}

// OpenAPIPath converts a Fiber route path to an OpenAPI path template:
// /api/users/:id → /api/users/{id}. An optional parameter (:id?) becomes a
// plain one, as OpenAPI path parameters are always required.
func OpenAPIPath(fiberPath string) string {
	return fiberParam.ReplaceAllString(fiberPath, "{$1}")
}

// templateKey erases parameter names so that /a/{id} and /a/{x} compare
// equal, as OpenAPI considers them the same path.
func templateKey(p string) string {
	return openapiParam.ReplaceAllString(p, "{}")
}

// decode parses YAML or JSON into plain maps with string keys (YAML
// decodes a key such as 200 as a number; JSON needs strings).
func decode(data []byte) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if v == nil {
		return nil, errors.New("empty document")
	}
	m, ok := normalize(v).(map[string]any)
	if !ok {
		return nil, errors.New("the document is not an object")
	}
	return m, nil
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	}
	return v
}

func asMap(v any, what string) (map[string]any, error) {
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object", what)
	}
	return m, nil
}

// asObject is asMap for values that must be present.
func asObject(v any, what string) (map[string]any, error) {
	if v == nil {
		return nil, fmt.Errorf("%s must be an object", what)
	}
	return asMap(v, what)
}

func asList(v any, what string) ([]any, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a list", what)
	}
	return l, nil
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
