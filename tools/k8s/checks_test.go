package k8s

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	natsconf "github.com/nats-io/nats-server/v2/conf"
	"sigs.k8s.io/yaml"
)

// What schema validation cannot see: each check returns one line per
// problem. cluster is the rendered output plus the repository files the
// manifests must agree with.
type cluster struct {
	objs   []*object
	root   string // repository root: deploy/docker, deploy/config
	k8sDir string // the kustomization that was rendered
}

const placeholder = "SET-BY-KUSTOMIZATION"

func (c *cluster) get(kind, name string) *object {
	for _, o := range c.objs {
		if o.Kind == kind && o.Metadata.Name == name {
			return o
		}
	}
	return nil
}

func (c *cluster) ofKind(kinds ...string) []*object {
	var out []*object
	for _, o := range c.objs {
		for _, k := range kinds {
			if o.Kind == k {
				out = append(out, o)
			}
		}
	}
	return out
}

// configMap returns a ConfigMap by its rendered name (what pods refer to)
// or by its name in kustomization.yaml (rendered with a hash suffix).
func (c *cluster) configMap(name string) *object {
	if o := c.get("ConfigMap", name); o != nil {
		return o
	}
	for _, o := range c.ofKind("ConfigMap") {
		if base, hash, ok := cutLast(o.Metadata.Name, "-"); ok && base == name && len(hash) == 10 {
			return o
		}
	}
	return nil
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func (c *cluster) workloads() []*object {
	return c.ofKind("Deployment", "StatefulSet", "DaemonSet")
}

func (c *cluster) all() []string {
	var p []string
	for _, check := range []func() []string{
		c.checkPlaceholders, c.checkReferences, c.checkSelectors, c.checkPorts,
		c.checkPDBs, c.checkImages, c.checkNATS, c.checkRedis, c.checkJaeger,
		c.checkCoordinator, c.checkWorkers, c.checkAgreement, c.checkPrometheus,
		c.checkMirrors,
	} {
		p = append(p, check()...)
	}
	return p
}

// Every value kustomization.yaml's settings replace did get replaced.
func (c *cluster) checkPlaceholders() []string {
	var p []string
	for _, o := range c.objs {
		if strings.Contains(string(o.YAML), placeholder) {
			p = append(p, o.id()+": still holds "+placeholder+" (a replacement in kustomization.yaml missed it)")
		}
	}
	return p
}

// ConfigMaps, claims and service accounts the pods name exist (the
// generated ones under their hashed names), unless marked optional.
func (c *cluster) checkReferences() []string {
	var p []string
	for _, w := range c.workloads() {
		ps := w.Spec.Template.Spec
		for _, v := range ps.Volumes {
			if v.ConfigMap != nil && !v.ConfigMap.Optional && c.configMap(v.ConfigMap.Name) == nil {
				p = append(p, fmt.Sprintf("%s: volume %s: ConfigMap %s does not exist", w.id(), v.Name, v.ConfigMap.Name))
			}
			if v.PersistentVolumeClaim != nil && c.get("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName) == nil {
				p = append(p, fmt.Sprintf("%s: volume %s: claim %s does not exist", w.id(), v.Name, v.PersistentVolumeClaim.ClaimName))
			}
		}
		for _, ct := range append(ps.InitContainers, ps.Containers...) {
			for _, ef := range ct.EnvFrom {
				if ef.ConfigMapRef != nil && !ef.ConfigMapRef.Optional && c.configMap(ef.ConfigMapRef.Name) == nil {
					p = append(p, fmt.Sprintf("%s: container %s: envFrom ConfigMap %s does not exist", w.id(), ct.Name, ef.ConfigMapRef.Name))
				}
			}
			names := map[string]bool{}
			for _, v := range ps.Volumes {
				names[v.Name] = true
			}
			for _, t := range w.Spec.VolumeClaimTemplates {
				names[t.Metadata.Name] = true
			}
			for _, m := range ct.VolumeMounts {
				if !names[m.Name] {
					p = append(p, fmt.Sprintf("%s: container %s mounts volume %s, which the pod does not have", w.id(), ct.Name, m.Name))
				}
			}
		}
		if sa := ps.ServiceAccountName; sa != "" && c.get("ServiceAccount", sa) == nil {
			p = append(p, fmt.Sprintf("%s: service account %s does not exist", w.id(), sa))
		}
	}
	return p
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// A workload's selector matches its own pods; a Service selects some pods.
func (c *cluster) checkSelectors() []string {
	var p []string
	for _, w := range c.workloads() {
		if w.Spec.Selector == nil || !matches(w.Spec.Selector.MatchLabels, w.Spec.Template.Metadata.Labels) {
			p = append(p, w.id()+": selector does not match the pod template's labels")
		}
	}
	for _, s := range c.ofKind("Service") {
		if len(c.podsOf(s.Spec.ServiceSelector)) == 0 {
			p = append(p, s.id()+": selects no pods")
		}
	}
	return p
}

func (c *cluster) podsOf(selector map[string]string) []*object {
	var out []*object
	for _, w := range c.workloads() {
		if matches(selector, w.Spec.Template.Metadata.Labels) {
			out = append(out, w)
		}
	}
	return out
}

// declares reports whether a container declares a port, by name or number.
func declares(ct container, port intOrStr) bool {
	for _, cp := range ct.Ports {
		if string(port) == cp.Name || string(port) == strconv.Itoa(cp.ContainerPort) {
			return true
		}
	}
	return false
}

func portNumber(ct container, port intOrStr) int {
	for _, cp := range ct.Ports {
		if string(port) == cp.Name || string(port) == strconv.Itoa(cp.ContainerPort) {
			return cp.ContainerPort
		}
	}
	return 0
}

// Every probe, scrape annotation and Service target port names a port its
// container declares.
func (c *cluster) checkPorts() []string {
	var p []string
	for _, w := range c.workloads() {
		ps := w.Spec.Template.Spec
		for _, ct := range ps.Containers {
			for kind, pr := range map[string]*probe{"startup": ct.StartupProbe, "readiness": ct.ReadinessProbe, "liveness": ct.LivenessProbe} {
				if pr == nil {
					continue
				}
				var port intOrStr
				switch {
				case pr.HTTPGet != nil:
					port = pr.HTTPGet.Port
				case pr.TCPSocket != nil:
					port = pr.TCPSocket.Port
				case pr.GRPC != nil:
					port = intOrStr(strconv.Itoa(pr.GRPC.Port))
				default:
					continue
				}
				if !declares(ct, port) {
					p = append(p, fmt.Sprintf("%s: container %s: %s probe port %s is not a port the container declares", w.id(), ct.Name, kind, port))
				}
			}
			if ct.ReadinessProbe == nil || ct.LivenessProbe == nil {
				p = append(p, fmt.Sprintf("%s: container %s has no readiness or no liveness probe", w.id(), ct.Name))
			}
		}
		ann := w.Spec.Template.Metadata.Annotations
		if ann["prometheus.io/scrape"] == "true" {
			found := false
			for _, ct := range ps.Containers {
				found = found || declares(ct, intOrStr(ann["prometheus.io/port"]))
			}
			if !found {
				p = append(p, fmt.Sprintf("%s: prometheus.io/port %q is not a declared container port", w.id(), ann["prometheus.io/port"]))
			}
		}
	}
	for _, s := range c.ofKind("Service") {
		for _, sp := range s.Spec.Ports {
			target := sp.TargetPort
			if target == "" {
				target = intOrStr(strconv.Itoa(sp.Port))
			}
			for _, w := range c.podsOf(s.Spec.ServiceSelector) {
				found := false
				for _, ct := range w.Spec.Template.Spec.Containers {
					found = found || declares(ct, target)
				}
				if !found {
					p = append(p, fmt.Sprintf("%s: port %s targets %s, which %s does not declare", s.id(), sp.Name, target, w.id()))
				}
			}
		}
	}
	for _, st := range c.ofKind("StatefulSet") {
		svc := c.get("Service", st.Spec.ServiceName)
		if svc == nil || svc.Spec.ClusterIP != "None" {
			p = append(p, fmt.Sprintf("%s: serviceName %q is not a headless Service", st.id(), st.Spec.ServiceName))
		}
	}
	return p
}

// NATS, the coordinator and both kinds of workers have a disruption
// budget; a budget over DaemonSet pods uses an absolute minAvailable (the
// only form the disruption controller applies to controllers without a
// scale subresource).
func (c *cluster) checkPDBs() []string {
	var p []string
	covered := map[string]bool{}
	for _, b := range c.ofKind("PodDisruptionBudget") {
		if b.Spec.Selector == nil {
			p = append(p, b.id()+": no selector")
			continue
		}
		pods := c.podsOf(b.Spec.Selector.MatchLabels)
		if len(pods) == 0 {
			p = append(p, b.id()+": selects no pods")
		}
		for _, w := range pods {
			covered[w.id()] = true
			if w.Kind == "DaemonSet" && (b.Spec.MaxUnavailable != nil || b.Spec.MinAvailable == nil || !b.Spec.MinAvailable.isInt()) {
				p = append(p, fmt.Sprintf("%s: covers DaemonSet pods (%s): only an integer minAvailable works there", b.id(), w.id()))
			}
		}
	}
	for _, want := range []string{"StatefulSet/nats", "Deployment/coordinator", "DaemonSet/worker-gpu", "Deployment/worker-cpu"} {
		if !covered[want] {
			p = append(p, want+": no PodDisruptionBudget")
		}
	}
	return p
}

// dockerfiles maps an image's last path element to its Dockerfile, read
// from each Dockerfile's `docker build ... -t c2cluster/<name>` line.
func (c *cluster) dockerfiles() (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(c.root, "deploy", "docker", "*.Dockerfile"))
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`docker build .*-t c2cluster/([a-z0-9-]+)`)
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if m := re.FindSubmatch(b); m != nil {
			out[string(m[1])] = f
		}
	}
	return out, nil
}

func imageName(image string) string {
	name := image
	if i := strings.LastIndex(name, "@"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	return path.Base(name)
}

// Every c2cluster image is one deploy/docker builds.
func (c *cluster) checkImages() []string {
	var p []string
	df, err := c.dockerfiles()
	if err != nil {
		return []string{err.Error()}
	}
	for _, want := range []string{"coordinator", "worker-gpu", "worker-cpu"} {
		if df[want] == "" {
			p = append(p, "deploy/docker: no Dockerfile builds c2cluster/"+want)
		}
	}
	for _, w := range c.workloads() {
		for _, ct := range w.Spec.Template.Spec.Containers {
			if !strings.Contains(ct.Image, "c2cluster/") {
				continue
			}
			if df[imageName(ct.Image)] == "" {
				p = append(p, fmt.Sprintf("%s: image %s is not one deploy/docker builds", w.id(), ct.Image))
			}
		}
	}
	return p
}

// imageEnv is the ENV of a Dockerfile's last stage.
func imageEnv(dockerfile string) (map[string]string, error) {
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		return nil, err
	}
	var lines []string
	cur := ""
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		lines = append(lines, cur+l)
		cur = ""
	}
	env := map[string]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			env = map[string]string{}
		case "ENV":
			for _, kv := range f[1:] {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
		}
	}
	return env, nil
}

// settings resolves a c2cluster container's effective settings the way
// the binaries do: flags, then the environment (the pod's env over its
// envFrom over the image's ENV), then the worker's configuration file.
type settings struct {
	c        *cluster
	w        *object
	ct       container
	flags    map[string]string
	env      map[string]string
	file     map[string]any
	problems []string
}

func (c *cluster) settingsOf(w *object, ct container) *settings {
	s := &settings{c: c, w: w, ct: ct, flags: map[string]string{}, env: map[string]string{}}
	df, _ := c.dockerfiles()
	if f := df[imageName(ct.Image)]; f != "" {
		env, err := imageEnv(f)
		if err != nil {
			s.problems = append(s.problems, err.Error())
		}
		for k, v := range env {
			s.env[k] = v
		}
	}
	for _, ef := range ct.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		if cm := c.configMap(ef.ConfigMapRef.Name); cm != nil {
			for k, v := range cm.Data {
				s.env[k] = v
			}
		}
	}
	for _, e := range ct.Env {
		if len(e.ValueFrom) > 0 {
			s.env[e.Name] = "<from the pod>"
		} else {
			s.env[e.Name] = e.Value
		}
	}
	args := ct.Args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = args[1:] // the coordinator's subcommand
	}
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		if k, v, ok := strings.Cut(a, "="); ok {
			s.flags[k] = v
		} else if i+1 < len(args) {
			s.flags[a] = args[i+1]
			i++
		}
	}
	cfg, ok := s.lookup("", "config", "C2_WORKER_CONFIG")
	if ok {
		s.file = s.readConfig(cfg)
	}
	return s
}

// readConfig reads the configuration file at path from the ConfigMap
// mounted there.
func (s *settings) readConfig(p string) map[string]any {
	for _, m := range s.ct.VolumeMounts {
		var key string
		switch {
		case m.SubPath != "" && m.MountPath == p:
			key = m.SubPath
		case m.SubPath == "" && path.Dir(p) == path.Clean(m.MountPath):
			key = path.Base(p)
		default:
			continue
		}
		for _, v := range s.w.Spec.Template.Spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			cm := s.c.configMap(v.ConfigMap.Name)
			if cm == nil || cm.Data[key] == "" {
				s.problems = append(s.problems, fmt.Sprintf("%s: configuration %s: ConfigMap %s has no %s", s.w.id(), p, v.ConfigMap.Name, key))
				return nil
			}
			var f map[string]any
			if err := yaml.UnmarshalStrict([]byte(cm.Data[key]), &f); err != nil {
				s.problems = append(s.problems, fmt.Sprintf("%s: configuration %s: %v", s.w.id(), p, err))
			}
			return f
		}
	}
	s.problems = append(s.problems, fmt.Sprintf("%s: configuration file %s is not on a ConfigMap volume", s.w.id(), p))
	return nil
}

// lookup returns the value of a setting: flag, then variable, then the
// configuration file's key ("" for none).
func (s *settings) lookup(key, flag, env string) (string, bool) {
	if v, ok := s.flags[flag]; ok && flag != "" {
		return v, true
	}
	if v, ok := s.env[env]; ok && env != "" {
		return v, true
	}
	if v, ok := s.file[key]; ok && key != "" {
		switch x := v.(type) {
		case []any:
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = fmt.Sprint(e)
			}
			return strings.Join(parts, ","), true
		default:
			return fmt.Sprint(x), true
		}
	}
	return "", false
}

// Worker settings: configuration key, flag, variable (docs/worker.md).
var workerKeys = map[string][2]string{
	"nats":                   {"nats", "C2_NATS_URL"},
	"redis":                  {"redis", "C2_REDIS_ADDR"},
	"redis_prefix":           {"redis-prefix", "C2_REDIS_PREFIX"},
	"otlp":                   {"otlp", "C2_OTLP_ENDPOINT"},
	"metrics_listen":         {"metrics-listen", "C2_METRICS_LISTEN"},
	"shapes":                 {"shapes", "C2_SHAPES"},
	"params_dir":             {"params-dir", "C2_PARAMS_DIR"},
	"official_params_dir":    {"official-params-dir", "C2_OFFICIAL_PARAMS_DIR"},
	"backend":                {"backend", "C2_BACKEND"},
	"gpu_workers_per_device": {"gpu-workers-per-device", "C2_GPU_WORKERS_PER_DEVICE"},
	"ack_wait":               {"ack-wait", "C2_ACK_WAIT"},
	"max_deliver":            {"max-deliver", "C2_MAX_DELIVER"},
	"drain_timeout":          {"drain-timeout", "C2_DRAIN_TIMEOUT"},
	"abort_timeout":          {"abort-timeout", "C2_ABORT_TIMEOUT"},
}

func (s *settings) worker(key string) (string, bool) {
	fe := workerKeys[key]
	v, ok := s.lookup(key, fe[0], fe[1])
	if !ok && key == "official_params_dir" {
		if v, ok = s.env["FIL_PROOFS_PARAMETER_CACHE"]; !ok {
			return "/var/tmp/filecoin-proof-parameters", true
		}
	}
	return v, ok
}

// Coordinator settings: flag, variable (coordinator serve -h).
var coordinatorKeys = map[string][2]string{
	"listen":              {"listen", "C2_LISTEN"},
	"nats":                {"nats", "C2_NATS_URL"},
	"redis":               {"redis", "C2_REDIS_ADDR"},
	"redis_prefix":        {"redis-prefix", "C2_REDIS_PREFIX"},
	"otlp":                {"otlp", "C2_OTLP_ENDPOINT"},
	"params_dir":          {"params-dir", "C2_PARAMS_DIR"},
	"official_params_dir": {"official-params-dir", "FIL_PROOFS_PARAMETER_CACHE"},
	"ack_wait":            {"ack-wait", "C2_ACK_WAIT"},
	"max_deliver":         {"max-deliver", "C2_MAX_DELIVER"},
	"shutdown_timeout":    {"shutdown-timeout", ""},
}

var coordinatorDefaults = map[string]string{
	"listen": "127.0.0.1:8080", "nats": "nats://127.0.0.1:4222", "redis": "127.0.0.1:6379",
	"redis_prefix": "c2", "params_dir": "params", "official_params_dir": "/var/tmp/filecoin-proof-parameters",
	"ack_wait": "15s", "max_deliver": "5", "shutdown_timeout": "15s",
}

func (s *settings) coordinator(key string) string {
	fe := coordinatorKeys[key]
	if v, ok := s.lookup("", fe[0], fe[1]); ok {
		return v
	}
	return coordinatorDefaults[key]
}

// listenPort checks that a listen address serves other pods (not loopback)
// and returns its port.
func listenPort(addr string) (int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return 0, fmt.Errorf("%s listens on loopback only: probes and Prometheus cannot reach it", addr)
	}
	return strconv.Atoi(port)
}

// mountedAt returns the mount that holds dir.
func mountedAt(ct container, dir string) (string, bool, bool) {
	best := ""
	ro := false
	for _, m := range ct.VolumeMounts {
		mp := path.Clean(m.MountPath)
		if (dir == mp || strings.HasPrefix(dir, mp+"/")) && len(mp) > len(best) {
			best, ro = mp, m.ReadOnly
		}
	}
	return best, ro, best != ""
}

func probePort(ct container, pr *probe) int {
	if pr == nil || pr.HTTPGet == nil {
		return 0
	}
	return portNumber(ct, pr.HTTPGet.Port)
}

func probePath(pr *probe) string {
	if pr == nil || pr.HTTPGet == nil {
		return ""
	}
	return pr.HTTPGet.Path
}

// The coordinator: two replicas, its API where the probes and Prometheus
// look, its folders mounted, time to shut down.
func (c *cluster) checkCoordinator() []string {
	w := c.get("Deployment", "coordinator")
	if w == nil {
		return []string{"Deployment/coordinator is missing"}
	}
	var p []string
	if w.Spec.Replicas == nil || *w.Spec.Replicas != 2 {
		p = append(p, fmt.Sprintf("%s: replicas %v, want 2", w.id(), deref(w.Spec.Replicas)))
	}
	if c.get("Service", "coordinator") == nil {
		p = append(p, "Service/coordinator is missing")
	}
	for _, ct := range w.Spec.Template.Spec.Containers {
		s := c.settingsOf(w, ct)
		p = append(p, s.problems...)
		port, err := listenPort(s.coordinator("listen"))
		if err != nil {
			p = append(p, fmt.Sprintf("%s: -listen: %v", w.id(), err))
		}
		for name, pr := range map[string]*probe{"readiness": ct.ReadinessProbe, "liveness": ct.LivenessProbe} {
			if pp := probePort(ct, pr); pp != port || probePath(pr) != "/healthz" {
				p = append(p, fmt.Sprintf("%s: %s probe is not /healthz on the API port %d", w.id(), name, port))
			}
		}
		if ann := w.Spec.Template.Metadata.Annotations["prometheus.io/port"]; ann != strconv.Itoa(port) {
			p = append(p, fmt.Sprintf("%s: prometheus.io/port %q is not the API port %d", w.id(), ann, port))
		}
		for _, key := range []string{"params_dir", "official_params_dir"} {
			if _, _, ok := mountedAt(ct, s.coordinator(key)); !ok {
				p = append(p, fmt.Sprintf("%s: %s %s is on no volume", w.id(), key, s.coordinator(key)))
			}
		}
		if d, err := time.ParseDuration(s.coordinator("shutdown_timeout")); err != nil || grace(w) < d+5*time.Second {
			p = append(p, fmt.Sprintf("%s: terminationGracePeriodSeconds %v leaves -shutdown-timeout %s no room", w.id(), grace(w), s.coordinator("shutdown_timeout")))
		}
	}
	return p
}

func deref(p *int) any {
	if p == nil {
		return "unset"
	}
	return *p
}

func grace(w *object) time.Duration {
	g := w.Spec.Template.Spec.TerminationGracePeriodSeconds
	if g == nil {
		return 30 * time.Second // the API's default
	}
	return time.Duration(*g) * time.Second
}

const gib = 1 << 30

// quantityBytes parses the memory quantities these manifests use.
func quantityBytes(q string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}
	for _, u := range units {
		if n, ok := strings.CutSuffix(q, u.suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			return v * u.mult, err
		}
	}
	return strconv.ParseInt(q, 10, 64)
}

// The workers: metrics and /healthz where the probes look, the drain
// inside the grace period, folders on volumes, GPUs and host memory.
func (c *cluster) checkWorkers() []string {
	var p []string
	gpu, cpu := c.get("DaemonSet", "worker-gpu"), c.get("Deployment", "worker-cpu")
	if gpu == nil || cpu == nil {
		return []string{"DaemonSet/worker-gpu or Deployment/worker-cpu is missing"}
	}
	for _, w := range []*object{gpu, cpu} {
		for _, ct := range w.Spec.Template.Spec.Containers {
			s := c.settingsOf(w, ct)
			p = append(p, s.problems...)
			if s.file == nil {
				p = append(p, w.id()+": no configuration file (-config)")
			}
			listen, _ := s.worker("metrics_listen")
			if listen == "" {
				listen = "127.0.0.1:9464" // the worker's default
			}
			port, err := listenPort(listen)
			if err != nil {
				p = append(p, fmt.Sprintf("%s: metrics_listen: %v", w.id(), err))
			}
			for name, pr := range map[string]*probe{"startup": ct.StartupProbe, "readiness": ct.ReadinessProbe, "liveness": ct.LivenessProbe} {
				if pp := probePort(ct, pr); pp != port || probePath(pr) != "/healthz" {
					p = append(p, fmt.Sprintf("%s: %s probe is not /healthz on the metrics port %d (metrics_listen %s)", w.id(), name, port, listen))
				}
			}
			if ann := w.Spec.Template.Metadata.Annotations["prometheus.io/port"]; ann != strconv.Itoa(port) {
				p = append(p, fmt.Sprintf("%s: prometheus.io/port %q is not the metrics port %d", w.id(), ann, port))
			}

			// SIGTERM: drain_timeout for partitions in flight, then
			// abort_timeout to hand the rest back; stated in the manifests.
			var drain time.Duration
			for _, key := range []string{"drain_timeout", "abort_timeout"} {
				v, ok := s.worker(key)
				d, err := time.ParseDuration(v)
				if !ok || err != nil {
					p = append(p, fmt.Sprintf("%s: %s is not set to a duration in the manifests (%q)", w.id(), key, v))
				}
				drain += d
			}
			if grace(w) < drain {
				p = append(p, fmt.Sprintf("%s: terminationGracePeriodSeconds %v is shorter than drain_timeout + abort_timeout (%v): the kubelet kills the worker mid-drain", w.id(), grace(w), drain))
			}

			for _, key := range []string{"params_dir", "official_params_dir"} {
				dir, _ := s.worker(key)
				_, ro, ok := mountedAt(ct, dir)
				if !ok {
					p = append(p, fmt.Sprintf("%s: %s %q is on no volume", w.id(), key, dir))
				} else if ro && key == "params_dir" {
					p = append(p, fmt.Sprintf("%s: params_dir %s is read-only: the worker keeps its checked markers there", w.id(), dir))
				}
			}

			backend, _ := s.worker("backend")
			slots := 1
			if backend == "cuda" {
				slots = 3
			}
			if v, ok := s.worker("gpu_workers_per_device"); ok {
				if slots, err = strconv.Atoi(v); err != nil {
					p = append(p, fmt.Sprintf("%s: gpu_workers_per_device %q", w.id(), v))
				}
			}
			devices := 1
			if w == gpu {
				if backend != "cuda" {
					p = append(p, fmt.Sprintf("%s: backend %q, want cuda", w.id(), backend))
				}
				g := ct.Resources.Limits["nvidia.com/gpu"]
				devices, err = strconv.Atoi(string(g))
				if err != nil || devices < 1 {
					p = append(p, fmt.Sprintf("%s: limits nvidia.com/gpu %q: the GPU worker must ask the device plugin for its GPUs", w.id(), g))
				}
				if r, ok := ct.Resources.Requests["nvidia.com/gpu"]; ok && r != g {
					p = append(p, fmt.Sprintf("%s: requests nvidia.com/gpu %q differs from limits %q", w.id(), r, g))
				}
			} else if backend != "cpu" {
				p = append(p, fmt.Sprintf("%s: backend %q, want cpu", w.id(), backend))
			}
			// Host memory at 32 GiB: ~16 GiB per slot, plus the recorded
			// circuit and the parameters while they load (docs/operations.md).
			if shapes, _ := s.worker("shapes"); strings.Contains(","+shapes+",", ",32GiB,") {
				need := int64(devices*slots)*16*gib + 60*gib
				req, err := quantityBytes(string(ct.Resources.Requests["memory"]))
				if err != nil || req < need {
					p = append(p, fmt.Sprintf("%s: requests memory %q is below %d slot(s) x 16 GiB + 60 GiB = %d GiB for 32GiB", w.id(), ct.Resources.Requests["memory"], devices*slots, need/gib))
				}
			}
		}
	}
	ps := gpu.Spec.Template.Spec
	onGPUNodes := len(ps.NodeSelector) > 0
	if a := ps.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.Required != nil {
		for _, t := range a.NodeAffinity.Required.NodeSelectorTerms {
			onGPUNodes = onGPUNodes || len(t.MatchExpressions) > 0
		}
	}
	if !onGPUNodes {
		p = append(p, gpu.id()+": not limited to GPU nodes (no node selector or required node affinity)")
	}
	return p
}

// hostPort splits host:port from an address or a URL.
func hostPort(addr string) (string, int) {
	if _, rest, ok := strings.Cut(addr, "://"); ok {
		addr = rest
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

// serves reports whether a Service of that name exposes the port.
func (c *cluster) serves(host string, port int) bool {
	s := c.get("Service", host)
	if s == nil {
		return false
	}
	for _, sp := range s.Spec.Ports {
		if sp.Port == port {
			return true
		}
	}
	return false
}

func sameDuration(a, b string) bool {
	da, ea := time.ParseDuration(a)
	db, eb := time.ParseDuration(b)
	return ea == nil && eb == nil && da == db
}

// The coordinator and the workers agree on the queue and the store, and
// reach NATS, Redis and Jaeger through Services that exist.
func (c *cluster) checkAgreement() []string {
	var p []string
	co := c.get("Deployment", "coordinator")
	if co == nil || len(co.Spec.Template.Spec.Containers) == 0 {
		return nil
	}
	cs := c.settingsOf(co, co.Spec.Template.Spec.Containers[0])
	want := map[string]string{}
	for _, k := range []string{"ack_wait", "max_deliver", "redis_prefix"} {
		want[k] = cs.coordinator(k)
	}
	check := func(who, what, addr string) {
		h, port := hostPort(addr)
		if !c.serves(h, port) {
			p = append(p, fmt.Sprintf("%s: %s %q is no Service port of this namespace", who, what, addr))
		}
	}
	for _, k := range []string{"nats", "redis", "otlp"} {
		check(co.id(), k, cs.coordinator(k))
	}
	if q, ok := cs.lookup("", "jaeger-query", "C2_JAEGER_QUERY"); ok && q != "" {
		check(co.id(), "jaeger-query", q)
	}
	for _, name := range []string{"worker-gpu", "worker-cpu"} {
		w := c.get("DaemonSet", name)
		if w == nil {
			w = c.get("Deployment", name)
		}
		if w == nil {
			continue
		}
		for _, ct := range w.Spec.Template.Spec.Containers {
			s := c.settingsOf(w, ct)
			for k, v := range want {
				got, _ := s.worker(k)
				if got != v && !sameDuration(got, v) {
					p = append(p, fmt.Sprintf("%s: %s %q differs from the coordinator's %q (they must match)", w.id(), k, got, v))
				}
			}
			for _, k := range []string{"nats", "redis", "otlp"} {
				v, _ := s.worker(k)
				check(w.id(), k, v)
			}
		}
	}
	return p
}

// NATS: three servers that route to each other, JetStream on each one's
// volume, peers resolvable before they are ready. The configuration is
// parsed by nats-server's own parser.
func (c *cluster) checkNATS() []string {
	st := c.get("StatefulSet", "nats")
	if st == nil {
		return []string{"StatefulSet/nats is missing"}
	}
	var p []string
	if st.Spec.Replicas == nil || *st.Spec.Replicas != 3 {
		p = append(p, fmt.Sprintf("%s: replicas %v, want 3", st.id(), deref(st.Spec.Replicas)))
	}
	if svc := c.get("Service", st.Spec.ServiceName); svc != nil && !svc.Spec.PublishNotReadyAddresses {
		p = append(p, svc.id()+": publishNotReadyAddresses must be true: the servers route to each other before they are ready")
	}
	if !c.serves("nats", 4222) {
		p = append(p, "Service/nats: no client port 4222")
	}
	claims := map[string]bool{}
	for _, t := range st.Spec.VolumeClaimTemplates {
		claims[t.Metadata.Name] = true
	}
	for _, ct := range st.Spec.Template.Spec.Containers {
		var conf string
		for i, a := range ct.Args {
			if (a == "--config" || a == "-c") && i+1 < len(ct.Args) {
				conf = ct.Args[i+1]
			}
		}
		var text string
		for _, m := range ct.VolumeMounts {
			if path.Dir(conf) != path.Clean(m.MountPath) {
				continue
			}
			for _, v := range st.Spec.Template.Spec.Volumes {
				if v.Name == m.Name && v.ConfigMap != nil {
					if cm := c.configMap(v.ConfigMap.Name); cm != nil {
						text = cm.Data[path.Base(conf)]
					}
				}
			}
		}
		if text == "" {
			p = append(p, fmt.Sprintf("%s: configuration %q is not in a mounted ConfigMap", st.id(), conf))
			continue
		}
		// $POD_NAME is the pod's name, from the downward API; other
		// variables (a Secret's password) stand for what the pod gets, and
		// one the container lacks stays unset, so its reference fails.
		for _, e := range ct.Env {
			os.Setenv(e.Name, e.Value+"from-the-pod")
		}
		os.Setenv("POD_NAME", st.Metadata.Name+"-0")
		cfg, err := natsconf.Parse(text)
		for _, e := range ct.Env {
			os.Unsetenv(e.Name)
		}
		if err != nil {
			p = append(p, fmt.Sprintf("%s: %s: %v", st.id(), conf, err))
			continue
		}
		for _, msg := range natsAdvisoriesDenied(cfg) {
			p = append(p, fmt.Sprintf("%s: nats.conf: %s", st.id(), msg))
		}
		js, _ := cfg["jetstream"].(map[string]any)
		if dir, _ := js["store_dir"].(string); dir == "" {
			p = append(p, st.id()+": nats.conf: no jetstream store_dir")
		} else {
			found := false
			for _, m := range ct.VolumeMounts {
				if claims[m.Name] && (dir == path.Clean(m.MountPath) || strings.HasPrefix(dir, path.Clean(m.MountPath)+"/")) {
					found = true
				}
			}
			if !found {
				p = append(p, fmt.Sprintf("%s: jetstream store_dir %s is not on the StatefulSet's volume claim", st.id(), dir))
			}
		}
		cl, _ := cfg["cluster"].(map[string]any)
		listen, _ := cl["listen"].(string)
		_, cport := hostPort(listen)
		if cport == 0 || !declares(ct, intOrStr(strconv.Itoa(cport))) {
			p = append(p, fmt.Sprintf("%s: cluster listen %q is not a declared port", st.id(), listen))
		}
		routes := map[string]bool{}
		rs, _ := cl["routes"].([]any)
		for _, r := range rs {
			routes[fmt.Sprint(r)] = true
		}
		for i := 0; st.Spec.Replicas != nil && i < *st.Spec.Replicas; i++ {
			want := fmt.Sprintf("nats://%s-%d.%s:%d", st.Metadata.Name, i, st.Spec.ServiceName, cport)
			if !routes[want] {
				p = append(p, fmt.Sprintf("%s: nats.conf routes lack %s", st.id(), want))
			}
		}
		if len(routes) != len(rs) || (st.Spec.Replicas != nil && len(routes) != *st.Spec.Replicas) {
			p = append(p, fmt.Sprintf("%s: nats.conf has %d routes for %v servers", st.id(), len(rs), deref(st.Spec.Replicas)))
		}
	}
	return p
}

// natsAdvisoriesDenied checks that no client of the NATS server may
// publish on $JS.EVENT.>: the dead-letter stream captures the advisories
// the server publishes there, and a forged MAX_DELIVERIES advisory fails
// the job it names (docs/security.md). Every entry of authorization's users
// must be denied it, by its own permissions or by default_permissions (which
// a lone user/password does not get).
func natsAdvisoriesDenied(cfg map[string]any) []string {
	const subject = "$JS.EVENT.>"
	auth, _ := cfg["authorization"].(map[string]any)
	if auth == nil {
		return []string{"no authorization block: every client could publish on " + subject}
	}
	denies := func(perms any) (bool, bool) {
		pm, ok := perms.(map[string]any)
		if !ok {
			return false, false
		}
		pub, _ := pm["publish"].(map[string]any)
		var deny []any
		switch d := pub["deny"].(type) {
		case []any:
			deny = d
		case string:
			deny = []any{d}
		}
		for _, s := range deny {
			if s == subject {
				return true, true
			}
		}
		return false, true
	}
	var def any
	for _, k := range []string{"default_permissions", "default_permission", "permissions"} {
		if v, ok := auth[k]; ok {
			def = v
		}
	}
	users, _ := auth["users"].([]any)
	if len(users) == 0 {
		return []string{"authorization has no users list: a lone user/password gets no default_permissions, so nothing denies " + subject}
	}
	var p []string
	for i, u := range users {
		um, _ := u.(map[string]any)
		name := fmt.Sprint(um["user"])
		if um["user"] == nil {
			name = fmt.Sprintf("#%d", i+1)
		}
		denied, has := denies(um["permissions"])
		if !has {
			denied, _ = denies(def)
		}
		if !denied {
			p = append(p, fmt.Sprintf("user %s may publish on %s (a forged MAX_DELIVERIES advisory fails a job): deny it in default_permissions", name, subject))
		}
	}
	return p
}

// Redis: append-only, noeviction, its data on the volume claim.
func (c *cluster) checkRedis() []string {
	st := c.get("StatefulSet", "redis")
	if st == nil {
		return []string{"StatefulSet/redis is missing"}
	}
	var p []string
	if !c.serves("redis", 6379) {
		p = append(p, "Service/redis: no port 6379")
	}
	for _, ct := range st.Spec.Template.Spec.Containers {
		args := map[string]string{}
		for i := 0; i+1 < len(ct.Args); i++ {
			if strings.HasPrefix(ct.Args[i], "--") {
				args[ct.Args[i]] = ct.Args[i+1]
			}
		}
		if args["--appendonly"] != "yes" {
			p = append(p, st.id()+": redis-server without --appendonly yes")
		}
		if args["--maxmemory-policy"] != "noeviction" {
			p = append(p, st.id()+": redis-server without --maxmemory-policy noeviction")
		}
		dir := args["--dir"]
		found := false
		for _, t := range st.Spec.VolumeClaimTemplates {
			for _, m := range ct.VolumeMounts {
				found = found || (m.Name == t.Metadata.Name && path.Clean(m.MountPath) == dir)
			}
		}
		if !found {
			p = append(p, fmt.Sprintf("%s: --dir %q is not the volume claim's mount", st.id(), dir))
		}
	}
	return p
}

// Jaeger: OTLP gRPC and the UI on its Service.
func (c *cluster) checkJaeger() []string {
	var p []string
	for _, port := range []int{4317, 16686} {
		if !c.serves("jaeger", port) {
			p = append(p, fmt.Sprintf("Service/jaeger: no port %d", port))
		}
	}
	return p
}

// Prometheus: its rule files are deploy/prometheus/rules.yml, its jobs
// find the annotated coordinator and worker pods, and it may list pods.
func (c *cluster) checkPrometheus() []string {
	w := c.get("Deployment", "prometheus")
	if w == nil {
		return []string{"Deployment/prometheus is missing"}
	}
	var p []string
	rules, err := os.ReadFile(filepath.Join(c.k8sDir, "..", "prometheus", "rules.yml"))
	if err != nil {
		p = append(p, err.Error())
	}
	if cm := c.configMap("prometheus-rules"); cm == nil || cm.Data["rules.yml"] != string(rules) {
		p = append(p, "ConfigMap/prometheus-rules does not hold deploy/prometheus/rules.yml")
	}
	cm := c.configMap("prometheus-config")
	if cm == nil {
		return append(p, "ConfigMap/prometheus-config is missing")
	}
	var cfg struct {
		RuleFiles     []string `json:"rule_files"`
		ScrapeConfigs []struct {
			JobName        string `json:"job_name"`
			RelabelConfigs []struct {
				SourceLabels []string `json:"source_labels"`
				Regex        string   `json:"regex"`
				Action       string   `json:"action"`
			} `json:"relabel_configs"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["prometheus.yml"]), &cfg); err != nil {
		return append(p, "prometheus.yml: "+err.Error())
	}
	ct := w.Spec.Template.Spec.Containers[0]
	rulesMount := ""
	for _, m := range ct.VolumeMounts {
		for _, v := range w.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == c.configMap("prometheus-rules").Metadata.Name {
				rulesMount = path.Join(m.MountPath, "rules.yml")
			}
		}
	}
	loaded := false
	for _, g := range cfg.RuleFiles {
		ok, _ := path.Match(g, rulesMount)
		loaded = loaded || ok
	}
	if !loaded {
		p = append(p, fmt.Sprintf("prometheus.yml: rule_files %v do not load %s", cfg.RuleFiles, rulesMount))
	}
	jobs := map[string]bool{}
	for _, sc := range cfg.ScrapeConfigs {
		for _, r := range sc.RelabelConfigs {
			if r.Action == "keep" && len(r.SourceLabels) == 1 && r.SourceLabels[0] == "__meta_kubernetes_pod_label_app_kubernetes_io_name" {
				found := false
				for _, wl := range c.workloads() {
					l := wl.Spec.Template.Metadata
					found = found || (l.Labels["app.kubernetes.io/name"] == r.Regex && l.Annotations["prometheus.io/scrape"] == "true")
				}
				if !found {
					p = append(p, fmt.Sprintf("prometheus.yml: job %s keeps pods named %q, and no annotated pod is", sc.JobName, r.Regex))
				}
				jobs[r.Regex] = true
			}
		}
	}
	for _, wl := range c.workloads() {
		l := wl.Spec.Template.Metadata
		if l.Annotations["prometheus.io/scrape"] == "true" && !jobs[l.Labels["app.kubernetes.io/name"]] {
			p = append(p, fmt.Sprintf("%s: asks to be scraped, and no job of prometheus.yml keeps it", wl.id()))
		}
	}
	sa := w.Spec.Template.Spec.ServiceAccountName
	canList := false
	for _, rb := range c.ofKind("RoleBinding") {
		bound := false
		for _, s := range rb.Subjects {
			bound = bound || (s.Kind == "ServiceAccount" && s.Name == sa)
		}
		role := c.get(rb.RoleRef.Kind, rb.RoleRef.Name)
		if !bound || role == nil {
			continue
		}
		for _, r := range role.Rules {
			if contains(r.Resources, "pods") && contains(r.Verbs, "list") && contains(r.Verbs, "watch") {
				canList = true
			}
		}
	}
	if !canList {
		p = append(p, fmt.Sprintf("%s: service account %q may not list and watch pods", w.id(), sa))
	}
	return p
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// The Kubernetes configuration mirrors the example one: every setting of
// deploy/config/coordinator.env is in config/coordinator.env, and every key
// of config/worker.yaml is one deploy/config/worker.yaml shows (that file
// is checked against the worker's own loader in worker/cli).
func (c *cluster) checkMirrors() []string {
	var p []string
	envKeys := func(f string) (map[string]bool, error) {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		keys := map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			if k, _, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
				keys[k] = true
			}
		}
		return keys, nil
	}
	ex, err1 := envKeys(filepath.Join(c.root, "deploy", "config", "coordinator.env"))
	k8s, err2 := envKeys(filepath.Join(c.k8sDir, "config", "coordinator.env"))
	if err1 != nil || err2 != nil {
		return []string{fmt.Sprint(err1, err2)}
	}
	for k := range ex {
		if !k8s[k] {
			p = append(p, "deploy/k8s/config/coordinator.env lacks "+k+" of deploy/config/coordinator.env")
		}
	}
	yamlKeys := regexp.MustCompile(`(?m)^#?\s*([a-z_]+):`)
	exw, err1 := os.ReadFile(filepath.Join(c.root, "deploy", "config", "worker.yaml"))
	k8w, err2 := os.ReadFile(filepath.Join(c.k8sDir, "config", "worker.yaml"))
	if err1 != nil || err2 != nil {
		return append(p, fmt.Sprint(err1, err2))
	}
	known := map[string]bool{}
	for _, m := range yamlKeys.FindAllStringSubmatch(string(exw), -1) {
		known[m[1]] = true
	}
	var f map[string]any
	if err := yaml.Unmarshal(k8w, &f); err != nil {
		return append(p, "deploy/k8s/config/worker.yaml: "+err.Error())
	}
	var unknown []string
	for k := range f {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		p = append(p, "deploy/k8s/config/worker.yaml: key "+k+" is not one deploy/config/worker.yaml knows")
	}
	return p
}
