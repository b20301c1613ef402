package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/contractflow/contractflow/platform/kernel"
)

const repoRoot = "../.."

// TestDockerfile checks the image statically (there is no Docker engine
// here): base images by exact tag or digest, never latest; an unprivileged
// user; the health check through `contractflow health`; and that every
// CONTRACTFLOW_ variable it sets is a configuration key the service accepts.
func TestDockerfile(t *testing.T) {
	lines := logicalLines(t, filepath.Join(repoRoot, "Dockerfile"))
	args := map[string]string{}
	var froms []string
	var user, health string
	env := map[string]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		switch strings.ToUpper(f[0]) {
		case "ARG":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				args[k] = v
			}
		case "FROM":
			img := f[1]
			if strings.HasPrefix(img, "${") {
				img = args[strings.Trim(img, "${}")]
			}
			froms = append(froms, img)
		case "USER":
			user = f[1]
		case "HEALTHCHECK":
			health = l
		case "ENV":
			for _, kv := range f[1:] {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
		}
	}
	if len(froms) != 2 {
		t.Fatalf("FROM lines %v, want a build stage and a runtime stage", froms)
	}
	for _, img := range froms {
		checkImage(t, "Dockerfile", img)
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("USER %q: the service must not run as root", user)
	}
	if !strings.Contains(health, `CMD ["contractflow", "health"]`) {
		t.Errorf("HEALTHCHECK %q, want it to run contractflow health", health)
	}
	checkVariables(t, "Dockerfile", env)

	ignore, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".git", "bin", "data", "*.db"} {
		if !slices.Contains(strings.Fields(string(ignore)), want) {
			t.Errorf(".dockerignore does not leave out %s", want)
		}
	}
}

// TestCompose checks docker-compose.yml statically: every service restarts
// unless stopped, images are pinned, the cluster profile runs Postgres, three
// nodes without host ports and a reverse proxy whose configuration is
// committed, and the service's variables are all known keys. With the docker
// tool installed, `docker compose config` must accept the file too.
func TestCompose(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	type service struct {
		Image       string            `yaml:"image"`
		Build       any               `yaml:"build"`
		Restart     string            `yaml:"restart"`
		Profiles    []string          `yaml:"profiles"`
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Healthcheck map[string]any    `yaml:"healthcheck"`
		Deploy      struct {
			Replicas int `yaml:"replicas"`
		} `yaml:"deploy"`
	}
	var doc struct {
		Services map[string]service `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	for name, s := range doc.Services {
		if s.Restart != "unless-stopped" {
			t.Errorf("service %s: restart %q, want unless-stopped", name, s.Restart)
		}
		if s.Image != "" {
			checkImage(t, "service "+name, s.Image)
		} else if s.Build == nil {
			t.Errorf("service %s has neither image nor build", name)
		}
		if len(s.Environment) > 0 && s.Build != nil {
			checkVariables(t, "service "+name, s.Environment)
		}
	}
	cluster := map[string]service{}
	for name, s := range doc.Services {
		if len(s.Profiles) == 0 || slices.Contains(s.Profiles, "cluster") {
			cluster[name] = s
		}
	}
	db, node, proxy := cluster["db"], cluster["node"], cluster["proxy"]
	if !strings.HasPrefix(db.Image, "postgres:") || db.Healthcheck == nil {
		t.Errorf("cluster db %+v: want Postgres with a health check", db)
	}
	if node.Build == nil || node.Deploy.Replicas != 3 || len(node.Ports) != 0 {
		t.Errorf("cluster node: build %v, replicas %d, ports %v; want the service image, 3 replicas, no host ports (so --scale never collides)",
			node.Build, node.Deploy.Replicas, node.Ports)
	}
	if node.Environment["CONTRACTFLOW_DATABASE_DRIVER"] != "postgres" {
		t.Errorf("cluster nodes do not share Postgres: %v", node.Environment)
	}
	if !slices.ContainsFunc(node.Volumes, func(v string) bool { return strings.HasSuffix(v, ":/data") }) {
		t.Errorf("cluster nodes do not share the files volume: %v", node.Volumes)
	}
	if len(proxy.Ports) != 1 || proxy.Image == "" {
		t.Errorf("cluster proxy: image %q ports %v, want one published port", proxy.Image, proxy.Ports)
	}
	for _, v := range proxy.Volumes {
		if src, _, ok := strings.Cut(v, ":"); ok && strings.HasPrefix(src, "./") {
			conf, err := os.ReadFile(filepath.Join(repoRoot, src))
			if err != nil {
				t.Errorf("proxy configuration %s: %v", src, err)
			} else if !strings.Contains(string(conf), "node 8080") || !strings.Contains(string(conf), "/health/ready") {
				t.Errorf("proxy configuration %s does not spread over the nodes with a health check", src)
			}
		}
	}
	if strings.Contains(string(data), "POSTGRES_PASSWORD: contractflow") {
		t.Error("the compose file must not carry a default database password")
	}

	// `docker compose config` when the tool and its compose plugin exist.
	if exec.Command("docker", "compose", "version").Run() == nil {
		cmd := exec.Command("docker", "compose", "-f", "docker-compose.yml", "--profile", "cluster", "config", "--quiet")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "POSTGRES_PASSWORD=x", "CONTRACTFLOW_JWT_SECRET="+strings.Repeat("x", 32))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("docker compose config: %v\n%s", err, out)
		}
	}
}

var pinned = regexp.MustCompile(`^[a-z0-9./-]+(:[A-Za-z0-9._-]+)?(@sha256:[0-9a-f]{64})?$`)

// checkImage wants an exact tag (or a digest), never latest or none.
func checkImage(t *testing.T, where, img string) {
	t.Helper()
	_, tag, hasTag := strings.Cut(strings.SplitN(img, "@", 2)[0], ":")
	if !pinned.MatchString(img) || (!hasTag && !strings.Contains(img, "@sha256:")) || tag == "latest" {
		t.Errorf("%s: image %q is not pinned to a tag or digest", where, img)
	}
}

// checkVariables starts the configuration with the variables as the
// container would see them: an unknown CONTRACTFLOW_ variable fails here,
// not at the customer's first start.
func checkVariables(t *testing.T, where string, env map[string]string) {
	t.Helper()
	subst := regexp.MustCompile(`\$\{([A-Z_]+)(:?[-?])?[^}]*\}`)
	var environ []string
	for k, v := range env {
		if !strings.HasPrefix(k, "CONTRACTFLOW_") {
			continue
		}
		v = subst.ReplaceAllStringFunc(v, func(m string) string {
			switch subst.FindStringSubmatch(m)[1] {
			case "CONTRACTFLOW_JWT_SECRET":
				return strings.Repeat("j", 40)
			case "POSTGRES_PASSWORD":
				return "an-operators-own-password"
			case "CONTRACTFLOW_SEED_ADMINPASSWORD":
				return "ChangeMe-Admin-2026"
			}
			return ""
		})
		environ = append(environ, k+"="+v)
	}
	if _, err := kernel.LoadConfig(kernel.Options{Environ: environ}); err != nil {
		t.Errorf("%s: the service refuses its variables: %v", where, err)
	}
}

// logicalLines reads a Dockerfile, joining continued lines and dropping comments.
func logicalLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") || (l == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	return out
}
