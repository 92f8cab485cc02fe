package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repo is the repository root, two folders up.
var repo = filepath.Join("..", "..", "..")

// fixture copies docker-compose.yml and the files it uses into a temporary
// folder, applies edits (file → old → new) and returns the compose file.
func fixture(t *testing.T, edits ...[3]string) string {
	t.Helper()
	dir := t.TempDir()
	files := []string{"docker-compose.yml"}
	for _, d := range []string{"deploy/docker", "deploy/prometheus", "deploy/grafana"} {
		err := filepath.WalkDir(filepath.Join(repo, d), func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				rel, _ := filepath.Rel(repo, p)
				files = append(files, rel)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range edits {
			if e[0] == f {
				if !strings.Contains(string(b), e[1]) {
					t.Fatalf("%s does not contain %q", f, e[1])
				}
				b = []byte(strings.Replace(string(b), e[1], e[2], 1))
			}
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "docker-compose.yml")
}

func run(t *testing.T, file string) []string {
	t.Helper()
	problems, err := check(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	return problems
}

// TestRepositoryCompose: the repository's docker-compose.yml passes.
func TestRepositoryCompose(t *testing.T) {
	if p := run(t, filepath.Join(repo, "docker-compose.yml")); len(p) > 0 {
		t.Fatalf("docker-compose.yml:\n%s", strings.Join(p, "\n"))
	}
}

// TestFindsProblems: each broken variant is reported with the words that
// name its problem.
func TestFindsProblems(t *testing.T) {
	const setup = "deploy/docker/setup.Dockerfile"
	cases := []struct {
		name  string
		edits [][3]string
		want  string
	}{
		{"params image without its mount point (the permission-denied bug)",
			[][3]string{{setup, "COPY --from=build --chown=65532:65532 /out/rootfs/ /\n", ""}},
			"params: volume params is mounted at /params, which setup.Dockerfile does not make: a new volume would be root's"},
		{"mount point owned by root",
			[][3]string{{setup, "--chown=65532:65532 /out/rootfs/", "/out/rootfs/"}},
			"params writes to volume params as uid 65532, but setup.Dockerfile (service params) makes its mount point /params owned by uid 0"},
		{"another image that mounts the volume gives it another owner",
			[][3]string{{"deploy/docker/worker-gpu.Dockerfile", "-o 65532 -g 65532 /params", "-o 10001 -g 10001 /params"}},
			"but worker-gpu.Dockerfile (service worker-gpu) makes its mount point /params owned by uid 10001"},
		{"a reader of the parameter files that is not their owner",
			[][3]string{{"deploy/docker/worker-gpu.Dockerfile", "USER 65532:65532", "USER 10001"}},
			"worker-gpu: reads volume params as uid 10001, but params writes its files as uid 65532, readable by their owner only"},
		{"params runs as another user than the one owning the mount point",
			[][3]string{{setup, "USER 65532:65532", "USER 1000"}},
			"params writes to volume params as uid 1000"},
		{"C2_PARAMS_DIR pointing elsewhere",
			[][3]string{{"docker-compose.yml", "C2_PARAMS_DIR: /params\n  C2_OFFICIAL", "C2_PARAMS_DIR: /srv/params\n  C2_OFFICIAL"}},
			"coordinator: C2_PARAMS_DIR=/srv/params but nothing is mounted there"},
		{"a reader that does not wait for params",
			[][3]string{{"docker-compose.yml", "      params: { condition: service_completed_successfully }\n    restart: unless-stopped\n\n  worker-cpu:", "    restart: unless-stopped\n\n  worker-cpu:"}},
			"coordinator: reads volume params, which params fills"},
		{"rule file not mounted",
			[][3]string{{"docker-compose.yml", "      - ./deploy/prometheus/rules.yml:/etc/prometheus/rules.yml:ro\n", ""}},
			"prometheus: rule file rules.yml (/etc/prometheus/rules.yml) is not mounted"},
		{"scrape target on a port the worker does not listen on",
			[][3]string{{"deploy/prometheus/prometheus.yml", "port: 9464", "port: 9100"}},
			"prometheus: job worker scrapes worker-cpu:9100, but worker-cpu listens on [9464]"},
		{"scrape target that is no service",
			[][3]string{{"deploy/prometheus/prometheus.yml", `"coordinator:8080"`, `"coord:8080"`}},
			"prometheus: job coordinator scrapes coord, which is no service"},
		{"dashboards not where the provider reads",
			[][3]string{{"docker-compose.yml", "./deploy/grafana/dashboards:/etc/grafana/dashboards:ro", "./deploy/grafana/dashboards:/var/lib/dashboards:ro"}},
			"grafana: the dashboard provider reads /etc/grafana/dashboards, where nothing is mounted"},
		{"datasource pointing at no service",
			[][3]string{{"deploy/grafana/provisioning/datasources/prometheus.yml", "http://prometheus:9090", "http://prom:9090"}},
			"grafana: datasource prometheus points at http://prom:9090"},
		{"prometheus data volume elsewhere than the image's data folder",
			[][3]string{{"docker-compose.yml", "prometheus-data:/prometheus", "prometheus-data:/data"}},
			"prometheus: volume prometheus-data is mounted at /data, not at the image's data folder \"/prometheus\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problems := run(t, fixture(t, c.edits...))
			for _, p := range problems {
				if strings.Contains(p, c.want) {
					return
				}
			}
			t.Fatalf("want a problem containing %q, got:\n%s", c.want, strings.Join(problems, "\n"))
		})
	}
}
