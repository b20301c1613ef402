package config

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"go.yaml.in/yaml/v3"
)

// Origin says which layer gave a setting its value.
type Origin string

// The layers a value can come from, in the order they apply.
const (
	FromDefault  Origin = "default"
	FromFile     Origin = "file"
	FromVariable Origin = "variable"
	FromOverride Origin = "override" // Options.Set (tests)
)

// Source is where one setting's value came from: the layer, and the file
// and line or the variable that set it.
type Source struct {
	Origin   Origin
	File     string // FromFile
	Line     int    // FromFile
	Variable string // FromVariable
}

// String is "default", "file config/config.yaml:12" or "variable CONTRACTFLOW_HTTP_ADDRESS".
func (s Source) String() string {
	switch s.Origin {
	case FromFile:
		return fmt.Sprintf("file %s:%d", s.File, s.Line)
	case FromVariable:
		return "variable " + s.Variable
	}
	return string(s.Origin)
}

// Setting is one key of the effective configuration.
type Setting struct {
	Key    string // dotted, as viper lower-cases it
	Value  string // as printed; secrets masked
	Source Source
}

// provenance remembers where every key came from while Load layers them.
type provenance struct {
	sources map[string]Source // lower-cased dotted key (leaves and sections) → source
	known   []string          // keys the defaults define
	names   []string          // those keys and their sections, for suggestions
}

func nextDot(k string, i int) int {
	j := strings.IndexByte(k[i+1:], '.')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func newProvenance(keys []string) *provenance {
	p := &provenance{sources: map[string]Source{}}
	for _, k := range keys {
		p.sources[k] = Source{Origin: FromDefault}
	}
	p.known = slices.Clone(keys)
	sort.Strings(p.known)
	// Sections are suggestions too: "databse" is nearest to "database".
	seen := map[string]bool{}
	for _, k := range keys {
		for i := strings.IndexByte(k, '.'); i > 0; i = nextDot(k, i) {
			if !seen[k[:i]] {
				seen[k[:i]] = true
				p.names = append(p.names, k[:i])
			}
		}
		p.names = append(p.names, k)
	}
	return p
}

// addFile records the line of every key of a YAML file, sections included,
// so an error about a key can point at it.
func (p *provenance) addFile(path string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	var walk func(prefix string, n *yaml.Node)
	walk = func(prefix string, n *yaml.Node) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := prefix + strings.ToLower(n.Content[i].Value)
			p.sources[key] = Source{Origin: FromFile, File: path, Line: n.Content[i].Line}
			walk(key+".", n.Content[i+1])
		}
	}
	walk("", doc.Content[0])
	return nil
}

// where names the source of key, or of the nearest section above it that
// has one, for error messages: " (file config.yaml:3)".
func (p *provenance) where(key string) string {
	key = strings.ToLower(key)
	for k := key; k != ""; {
		if s, ok := p.sources[k]; ok && s.Origin != FromDefault {
			return " (" + s.String() + ")"
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return ""
}

// nearest is the known key closest to key by edit distance, if it is close
// enough to be a plausible typo.
func (p *provenance) nearest(key string) string {
	key = strings.ToLower(key)
	best, bestD := "", 1<<30
	for _, k := range p.names {
		if d := distance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD > max(3, len(key)/2) {
		return ""
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// envName is the variable that sets key.
func envName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// unknownKey is the error for a key no section declares.
func (p *provenance) unknownKey(key string) error {
	msg := fmt.Sprintf("config: unknown key %s%s", key, p.where(key))
	if s := p.sources[strings.ToLower(key)]; s.Origin == FromVariable {
		msg = fmt.Sprintf("config: variable %s names no configuration key", s.Variable)
		if n := p.nearest(key); n != "" {
			msg += fmt.Sprintf("; did you mean %s (key %s)?", envName(n), n)
		}
		return errors.New(msg)
	}
	if n := p.nearest(key); n != "" {
		msg += fmt.Sprintf("; did you mean %s?", n)
	}
	return errors.New(msg)
}

// decodeErrors rewrites mapstructure's errors so each names the key, where
// its value came from and what the key expects.
func (p *provenance) decodeErrors(err error, prefix string) error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var de *mapstructure.DecodeError
		if errors.As(e, &de) {
			key := prefix + de.Name()
			out = append(out, fmt.Errorf("config key %s%s: %s", key, p.where(key), expected(de.Unwrap())))
			return
		}
		out = append(out, fmt.Errorf("config: %w", e))
	}
	walk(err)
	return errors.Join(out...)
}

// expected turns a mapstructure conversion error into words.
func expected(err error) string {
	var pe *mapstructure.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("expected %s, got %q", typeWords(pe.Expected.Type()), fmt.Sprint(pe.Value))
	}
	var ue *mapstructure.UnconvertibleTypeError
	if errors.As(err, &ue) {
		return fmt.Sprintf("expected %s, got %v", typeWords(ue.Expected.Type()), ue.Value)
	}
	return err.Error()
}

// durationHook reads a duration, saying what one looks like when it is not.
func durationHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to != reflect.TypeFor[time.Duration]() {
		return data, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(data.(string)))
	if err != nil {
		return nil, fmt.Errorf("expected a duration such as 30s, 15m or 2h, got %q", data)
	}
	return d, nil
}

func typeWords(t reflect.Type) string {
	switch t.String() {
	case "time.Duration":
		return "a duration such as 30s, 15m or 2h"
	case "bool":
		return "true or false"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number ≥ 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a list (comma-separated in a variable)"
	case reflect.Map, reflect.Struct:
		return "a section of keys"
	}
	return t.String()
}

// secretKey matches the keys whose values are masked when printed.
var secretKey = regexp.MustCompile(`(?i)(secret|password|token|apikey|privatekey)`)

// maskValue hides a secret, and the password inside a database DSN.
func maskValue(key string, val any) string {
	s := fmt.Sprint(val)
	if list, ok := val.([]any); ok {
		parts := make([]string, len(list))
		for i, v := range list {
			parts[i] = fmt.Sprint(v)
		}
		s = "[" + strings.Join(parts, ", ") + "]"
	}
	last := key[strings.LastIndexByte(key, '.')+1:]
	if secretKey.MatchString(last) {
		if s == "" {
			return ""
		}
		return "******"
	}
	if last == "dsn" {
		return maskDSN(s)
	}
	return s
}

var dsnPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|\S+)`)

func maskDSN(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxxx")
			return strings.Replace(u.String(), "xxxxxx", "******", 1)
		}
		return s
	}
	return dsnPassword.ReplaceAllString(s, "${1}******")
}
