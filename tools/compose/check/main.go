// Command check loads docker-compose.yml with compose-go (the loader of
// `docker compose`) and checks what the schema cannot: that each service's
// volumes, paths and user agree with the image its Dockerfile builds, and
// that the Prometheus and Grafana services find their files.
//
//	go -C tools/compose run ./check ../../docker-compose.yml
//
// It prints one line per problem and exits 1 when there is any.
// scripts/check-compose.sh runs it (and its tests) after the schema check.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v4"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: check docker-compose.yml")
		os.Exit(2)
	}
	problems, err := check(context.Background(), os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// externalImages are the images of other projects the file uses, with what
// the checks rely on: the data folder a named volume goes to (the image
// makes it, owned by the user the image runs as) and the port it listens on.
var externalImages = map[string]struct {
	dataDir string
	port    string
}{
	"nats":                 {"/data", "4222"},
	"redis":                {"/data", "6379"},
	"jaegertracing/jaeger": {"", "4317"},
	"prom/prometheus":      {"/prometheus", "9090"},
	"grafana/grafana":      {"/var/lib/grafana", "3000"},
}

func repoOf(img string) string {
	r, _, _ := strings.Cut(img, ":")
	return r
}

// project is the loaded file with the images of its built services.
type project struct {
	*types.Project
	images map[string]*image // service → image its Dockerfile builds
}

// env is the service's environment: the image's ENV under the file's.
func (p *project) env(name string) map[string]string {
	out := map[string]string{}
	if img := p.images[name]; img != nil {
		for k, v := range img.Env {
			out[k] = v
		}
	}
	for k, v := range p.Services[name].Environment {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

// user is the uid the service's container runs as.
func (p *project) user(name string) (int, bool) {
	svc := p.Services[name]
	if svc.User != "" {
		var uid int
		if _, err := fmt.Sscanf(svc.User, "%d", &uid); err == nil {
			return uid, true
		}
		return 0, false
	}
	if img := p.images[name]; img != nil {
		return img.User, true
	}
	return 0, false
}

// ports are the TCP ports the service listens on: the images' defaults,
// and the port of each *_LISTEN address in its environment.
func (p *project) ports(name string) []string {
	var out []string
	if img := p.images[name]; img == nil {
		if e, ok := externalImages[repoOf(p.Services[name].Image)]; ok {
			out = append(out, e.port)
		}
	}
	for k, v := range p.env(name) {
		if strings.HasSuffix(k, "_LISTEN") {
			if i := strings.LastIndex(v, ":"); i >= 0 {
				out = append(out, v[i+1:])
			}
		}
	}
	return out
}

// mountAt returns the service's volume mounted at target.
func mountAt(svc types.ServiceConfig, target string) (types.ServiceVolumeConfig, bool) {
	for _, v := range svc.Volumes {
		if filepath.Clean(v.Target) == filepath.Clean(target) {
			return v, true
		}
	}
	return types.ServiceVolumeConfig{}, false
}

// hostPath maps a path inside the service's container to the host file a
// bind mount puts there ("" when no bind mount covers it).
func hostPath(svc types.ServiceConfig, inside string) string {
	inside = filepath.Clean(inside)
	for _, v := range svc.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		t := filepath.Clean(v.Target)
		if inside == t {
			return v.Source
		}
		if rel, ok := strings.CutPrefix(inside, t+"/"); ok {
			return filepath.Join(v.Source, rel)
		}
	}
	return ""
}

func check(ctx context.Context, file string) ([]string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	opts, err := cli.NewProjectOptions([]string{abs}, cli.WithWorkingDirectory(filepath.Dir(abs)), cli.WithOsEnv)
	if err != nil {
		return nil, err
	}
	proj, err := opts.LoadProject(ctx)
	if err != nil {
		return nil, err
	}
	p := &project{Project: proj, images: map[string]*image{}}
	var problems []string
	report := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }

	names := slices.Sorted(func(yield func(string) bool) {
		for n := range proj.Services {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		svc := proj.Services[n]
		if svc.Build == nil {
			if _, ok := externalImages[repoOf(svc.Image)]; !ok {
				report("%s: image %s is not one this check knows (add it to externalImages)", n, svc.Image)
			}
			continue
		}
		img, err := readDockerfile(filepath.Join(svc.Build.Context, svc.Build.Dockerfile))
		if err != nil {
			report("%s: %v", n, err)
			continue
		}
		if !img.Entry {
			report("%s: %s has no ENTRYPOINT or CMD", n, svc.Build.Dockerfile)
		}
		p.images[n] = img
	}

	checkVolumes(p, names, report)
	checkPaths(p, names, report)
	checkPrometheus(p, report)
	checkGrafana(p, report)
	return problems, nil
}

// checkVolumes: a named volume mounted by a built service must have its
// mount point in that image, and a service that writes to it must own it in
// every image that mounts it (Docker and Podman give a new volume the owner
// of the first container's mount point; a point the image lacks is made
// root's). An external image's named volume must be its data folder.
func checkVolumes(p *project, names []string, report func(string, ...any)) {
	type use struct {
		svc    string
		target string
		ro     bool
	}
	uses := map[string][]use{}
	for _, n := range names {
		for _, v := range p.Services[n].Volumes {
			if v.Type != types.VolumeTypeVolume {
				continue
			}
			uses[v.Source] = append(uses[v.Source], use{n, v.Target, v.ReadOnly})
			if p.images[n] == nil {
				if e := externalImages[repoOf(p.Services[n].Image)]; e.dataDir != v.Target {
					report("%s: volume %s is mounted at %s, not at the image's data folder %q", n, v.Source, v.Target, e.dataDir)
				}
			}
		}
	}
	for vol, us := range uses {
		if _, ok := p.Volumes[vol]; !ok {
			report("volume %s is used but not declared under volumes:", vol)
		}
		for _, u := range us {
			img := p.images[u.svc]
			if img == nil {
				continue
			}
			if _, ok := img.Dirs[u.target]; !ok {
				report("%s: volume %s is mounted at %s, which %s does not make: a new volume would be root's", u.svc, vol, u.target, filepath.Base(img.File))
			}
		}
		for _, w := range us {
			if w.ro || p.images[w.svc] == nil {
				continue
			}
			uid, ok := p.user(w.svc)
			if !ok {
				report("%s: cannot tell which uid it runs as", w.svc)
				continue
			}
			if uid == 0 {
				continue
			}
			for _, u := range us {
				img := p.images[u.svc]
				if img == nil {
					continue
				}
				if owner, ok := img.Dirs[u.target]; ok && owner != uid {
					report("%s writes to volume %s as uid %d, but %s (service %s) makes its mount point %s owned by uid %d: if that container mounts it first, %s cannot write",
						w.svc, vol, uid, filepath.Base(img.File), u.svc, u.target, owner, w.svc)
				}
			}
		}
	}
}

// checkPaths: the folders the binaries are told to use (C2_PARAMS_DIR, the
// official parameter folder) are mounted where they point, and a service
// reading a volume another service fills waits for that one to finish.
func checkPaths(p *project, names []string, report func(string, ...any)) {
	for _, n := range names {
		if p.images[n] == nil {
			continue
		}
		svc := p.Services[n]
		env := p.env(n)
		for _, k := range []string{"C2_PARAMS_DIR", "C2_OFFICIAL_PARAMS_DIR", "FIL_PROOFS_PARAMETER_CACHE"} {
			dir, ok := env[k]
			if !ok {
				continue
			}
			m, ok := mountAt(svc, dir)
			if !ok {
				report("%s: %s=%s but nothing is mounted there", n, k, dir)
				continue
			}
			if m.Type == types.VolumeTypeVolume && m.ReadOnly {
				var filler string
				for _, o := range names {
					if mo, ok := mountAt(p.Services[o], m.Target); o != n && ok && mo.Source == m.Source && !mo.ReadOnly {
						filler = o
					}
				}
				if filler == "" {
					report("%s: volume %s (%s) is read-only here and no service writes to it", n, m.Source, k)
					continue
				}
				if d, ok := svc.DependsOn[filler]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
					report("%s: reads volume %s, which %s fills: it needs depends_on %s: {condition: service_completed_successfully}", n, m.Source, filler, filler)
				}
				// c2-params writes its files readable by their owner only
				// (mode 0600): a reader must run as the writer's uid.
				ru, rok := p.user(n)
				wu, wok := p.user(filler)
				if rok && wok && ru != 0 && ru != wu {
					report("%s: reads volume %s as uid %d, but %s writes its files as uid %d, readable by their owner only", n, m.Source, ru, filler, wu)
				}
			}
		}
	}
}

func serviceByImage(p *project, repo string) (string, bool) {
	for n, s := range p.Services {
		if repoOf(s.Image) == repo {
			return n, true
		}
	}
	return "", false
}

// checkPrometheus: the config file and the rule files it loads are mounted
// where Prometheus reads them, and every scrape target is a service
// listening on that port.
func checkPrometheus(p *project, report func(string, ...any)) {
	n, ok := serviceByImage(p, "prom/prometheus")
	if !ok {
		report("no prom/prometheus service")
		return
	}
	svc := p.Services[n]
	cfgPath := "/etc/prometheus/prometheus.yml"
	for _, a := range svc.Command {
		if v, ok := strings.CutPrefix(a, "--config.file="); ok {
			cfgPath = v
		}
	}
	host := hostPath(svc, cfgPath)
	if host == "" {
		report("%s: nothing is mounted at its config file %s", n, cfgPath)
		return
	}
	data, err := os.ReadFile(host)
	if err != nil {
		report("%s: %s is mounted from %s: %v", n, cfgPath, host, err)
		return
	}
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
			DNSSDConfigs []struct {
				Names []string `yaml:"names"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		report("%s: %s: %v", n, host, err)
		return
	}
	for _, rf := range cfg.RuleFiles {
		inside := rf
		if !filepath.IsAbs(inside) {
			inside = filepath.Join(filepath.Dir(cfgPath), rf)
		}
		h := hostPath(svc, inside)
		if h == "" {
			report("%s: rule file %s (%s) is not mounted", n, rf, inside)
		} else if _, err := os.Stat(h); err != nil {
			report("%s: rule file %s is mounted from %s, which does not exist", n, inside, h)
		}
	}
	target := func(job, svcName, port string) {
		if svcName == "localhost" {
			return
		}
		if _, ok := p.Services[svcName]; !ok {
			report("%s: job %s scrapes %s, which is no service", n, job, svcName)
			return
		}
		if !slices.Contains(p.ports(svcName), port) {
			report("%s: job %s scrapes %s:%s, but %s listens on %v", n, job, svcName, port, svcName, p.ports(svcName))
		}
	}
	for _, sc := range cfg.ScrapeConfigs {
		for _, s := range sc.StaticConfigs {
			for _, t := range s.Targets {
				h, port, _ := strings.Cut(t, ":")
				target(sc.JobName, h, port)
			}
		}
		for _, d := range sc.DNSSDConfigs {
			for _, name := range d.Names {
				target(sc.JobName, name, fmt.Sprint(d.Port))
			}
		}
	}
}

// checkGrafana: the provisioning files are mounted where Grafana reads
// them, the datasource points at the Prometheus service and the dashboards'
// folder (with at least one dashboard) is mounted where the provider looks.
func checkGrafana(p *project, report func(string, ...any)) {
	n, ok := serviceByImage(p, "grafana/grafana")
	if !ok {
		report("no grafana/grafana service")
		return
	}
	svc := p.Services[n]
	read := func(kind string) [][]byte {
		dir := hostPath(svc, "/etc/grafana/provisioning/"+kind)
		if dir == "" {
			report("%s: nothing is mounted at /etc/grafana/provisioning/%s", n, kind)
			return nil
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.yml"))
		if len(files) == 0 {
			report("%s: no provisioning file in %s", n, dir)
		}
		var out [][]byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				report("%s: %v", n, err)
				continue
			}
			out = append(out, b)
		}
		return out
	}
	for _, b := range read("datasources") {
		var ds struct {
			Datasources []struct {
				Type, URL string
			} `yaml:"datasources"`
		}
		if err := yaml.Unmarshal(b, &ds); err != nil {
			report("%s: datasources: %v", n, err)
			continue
		}
		for _, d := range ds.Datasources {
			u := strings.TrimPrefix(strings.TrimPrefix(d.URL, "http://"), "https://")
			h, port, _ := strings.Cut(strings.TrimSuffix(u, "/"), ":")
			if _, ok := p.Services[h]; !ok || !slices.Contains(p.ports(h), port) {
				report("%s: datasource %s points at %s, which is no service listening on that port", n, d.Type, d.URL)
			}
		}
	}
	for _, b := range read("dashboards") {
		var dp struct {
			Providers []struct {
				Options struct {
					Path string `yaml:"path"`
				} `yaml:"options"`
			} `yaml:"providers"`
		}
		if err := yaml.Unmarshal(b, &dp); err != nil {
			report("%s: dashboard providers: %v", n, err)
			continue
		}
		for _, pr := range dp.Providers {
			dir := hostPath(svc, pr.Options.Path)
			if dir == "" {
				report("%s: the dashboard provider reads %s, where nothing is mounted", n, pr.Options.Path)
				continue
			}
			if js, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(js) == 0 {
				report("%s: no dashboard in %s (mounted at %s)", n, dir, pr.Options.Path)
			}
		}
	}
	if home, ok := p.env(n)["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; ok {
		if h := hostPath(svc, home); h == "" {
			report("%s: home dashboard %s is not mounted", n, home)
		} else if _, err := os.Stat(h); err != nil {
			report("%s: home dashboard %s: %v", n, home, err)
		}
	}
}
