package k8s

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if !fileExists(filepath.Join(root, "deploy", "k8s", "kustomization.yaml")) {
		t.Fatalf("%s: no deploy/k8s/kustomization.yaml", root)
	}
	rules := filepath.Join(root, "deploy", "prometheus", "rules.yml")
	if !fileExists(rules) {
		t.Fatalf("%s is missing: deploy/k8s/kustomization.yaml makes Prometheus's rules ConfigMap from it", rules)
	}
	return root
}

// deploy/k8s renders, every object is valid for each Kubernetes release
// (unknown fields rejected), and the checks schemas cannot make pass.
func TestManifests(t *testing.T) {
	root := repoRoot(t)
	dir := filepath.Join(root, "deploy", "k8s")
	objs, err := render(dir)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Kind]++
		if o.Kind != "Namespace" && o.Metadata.Namespace != "c2cluster" {
			t.Errorf("%s: namespace %q, want c2cluster", o.id(), o.Metadata.Namespace)
		}
	}
	t.Logf("rendered %d objects: %v", len(objs), kinds)
	for _, want := range []string{"Namespace", "StatefulSet", "DaemonSet", "Deployment", "Service", "PodDisruptionBudget", "ConfigMap", "PersistentVolumeClaim", "Role", "RoleBinding", "ServiceAccount"} {
		if kinds[want] == 0 {
			t.Errorf("no %s rendered", want)
		}
	}
	for _, rel := range kubeReleases {
		t.Run("kubernetes-"+rel.version, func(t *testing.T) {
			api := loadOpenAPI(t, rel.version, rel.sha256)
			for _, p := range validate(t, api, objs) {
				t.Error(p)
			}
		})
	}
	c := &cluster{objs: objs, root: root, k8sDir: dir}
	for _, p := range c.all() {
		t.Error(p)
	}
}

// The validation fails where it must: objects with an unknown field, a
// wrong type, a misspelt kind or an API Kubernetes removed are rejected
// by every release's schemas, while a correct object beside them, with a
// numeric quantity and a numeric probe port, passes.
func TestSchemasRejectBrokenObjects(t *testing.T) {
	root := repoRoot(t)
	dir := copyTree(t, root, t.TempDir())
	broken := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: unknown-field
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
        - name: x
          image: x
          imagePullPolice: Always
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: wrong-type
spec:
  replicas: two
  selector: {matchLabels: {app: y}}
  template:
    metadata: {labels: {app: y}}
    spec:
      containers:
        - {name: y, image: y}
---
apiVersion: v1
kind: Service
metadata:
  name: missing-port
spec:
  selector: {app: x}
  ports:
    - name: api
      targetPort: 8080
---
apiVersion: apps/v1
kind: Deploymnet
metadata:
  name: misspelt-kind
spec: {}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: removed-api
spec:
  minAvailable: 1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: fine
spec:
  replicas: 1
  selector: {matchLabels: {app: z}}
  template:
    metadata: {labels: {app: z}}
    spec:
      containers:
        - name: z
          image: z
          ports: [{name: http, containerPort: 8080}]
          readinessProbe: {httpGet: {path: /, port: http}}
          livenessProbe: {tcpSocket: {port: 8080}}
          resources:
            requests: {cpu: 1, memory: 64Mi}
            limits: {nvidia.com/gpu: 1}
`
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(dir, "kustomization.yaml"), "  - prometheus.yaml\n", "  - prometheus.yaml\n  - broken.yaml\n")
	objs, err := render(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Deployment/unknown-field":        "imagePullPolice",
		"Deployment/wrong-type":           "/spec/replicas",
		"Service/missing-port":            "missing property 'port'",
		"Deploymnet/misspelt-kind":        "could not find schema",
		"PodDisruptionBudget/removed-api": "could not find schema",
	}
	for _, rel := range kubeReleases {
		t.Run("kubernetes-"+rel.version, func(t *testing.T) {
			api := loadOpenAPI(t, rel.version, rel.sha256)
			got := map[string]string{}
			for _, p := range validate(t, api, objs) {
				id, _, _ := strings.Cut(p, ": ")
				got[id] = p
			}
			for id, sub := range want {
				if !strings.Contains(got[id], sub) {
					t.Errorf("%s: want a rejection mentioning %q, got %q", id, sub, got[id])
				}
				t.Logf("rejected as it should be: %s", got[id])
				delete(got, id)
			}
			for _, p := range got {
				t.Errorf("only the broken objects should fail: %s", p)
			}
		})
	}
}

// Each check fails on the mistake it is there for: a copy of deploy/k8s
// with one edit renders, and the checks name the problem.
func TestChecksCatchMistakes(t *testing.T) {
	root := repoRoot(t)
	cases := []struct {
		name, file, old, new, want string
	}{
		{"unchanged", "", "", "", ""},
		{"probe on an undeclared port", "worker-gpu.yaml",
			"readinessProbe:\n            httpGet:\n              path: /healthz\n              port: metrics",
			"readinessProbe:\n            httpGet:\n              path: /healthz\n              port: metricz",
			"DaemonSet/worker-gpu: container worker: readiness probe port metricz is not a port the container declares"},
		{"grace period shorter than the drain", "worker-gpu.yaml",
			"terminationGracePeriodSeconds: 180", "terminationGracePeriodSeconds: 120",
			"DaemonSet/worker-gpu: terminationGracePeriodSeconds 2m0s is shorter than drain_timeout + abort_timeout (2m30s)"},
		{"drain timeout raised in the worker configuration", "config/worker.yaml",
			"drain_timeout: 2m", "drain_timeout: 5m",
			"DaemonSet/worker-gpu: terminationGracePeriodSeconds 3m0s is shorter than drain_timeout + abort_timeout (5m30s)"},
		{"drain timeout raised by a flag", "worker-cpu.yaml",
			`args: ["-config", "/etc/c2cluster/worker.yaml"]`, `args: ["-config", "/etc/c2cluster/worker.yaml", "-drain-timeout=10m"]`,
			"Deployment/worker-cpu: terminationGracePeriodSeconds 3m0s is shorter than drain_timeout + abort_timeout (10m30s)"},
		{"metrics address from the image's ENV (deploy/docker/worker-gpu.Dockerfile)", "worker-gpu.yaml",
			"            - name: C2_METRICS_LISTEN\n              value: 0.0.0.0:9464\n", "", ""},
		{"NATS password variable missing from the server's pod", "nats.yaml",
			"            - name: C2_NATS_PASSWORD\n", "            - name: C2_NATS_PASSWORT\n",
			"StatefulSet/nats: /etc/nats/nats.conf: variable reference for 'C2_NATS_PASSWORD' on line"},
		{"nats.conf that nats-server cannot parse", "config/nats.conf",
			"lame_duck_duration: 30s", "lame_duck_duration: [30s",
			"StatefulSet/nats: /etc/nats/nats.conf: "},
		{"clients may publish advisories", "config/nats.conf",
			`deny = ["$JS.EVENT.>", "$JS.EVENT.ADVISORY.>"]`, `deny = ["$JS.EVENT.ADVISORY.>"]`,
			"StatefulSet/nats: nats.conf: user c2 may publish on $JS.EVENT.> (a forged MAX_DELIVERIES advisory fails a job): deny it in default_permissions"},
		{"a lone user/password, without default_permissions", "config/nats.conf",
			"  users = [\n    { user: c2, password: $C2_NATS_PASSWORD }\n  ]\n", "  user: c2\n  password: $C2_NATS_PASSWORD\n",
			"StatefulSet/nats: nats.conf: authorization has no users list"},
		{"worker.yaml key the worker does not know", "config/worker.yaml",
			"pin_buffers: true", "pin_buffer: true",
			"deploy/k8s/config/worker.yaml: key pin_buffer is not one deploy/config/worker.yaml knows"},
		{"three coordinators", "kustomization.yaml",
			"    count: 2", "    count: 3",
			"Deployment/coordinator: replicas 3, want 2"},
		{"GPU worker without GPUs", "kustomization.yaml",
			"gpusPerNode=1", "gpusPerNode=0",
			"DaemonSet/worker-gpu: limits nvidia.com/gpu \"0\""},
		{"too little host memory for the slots", "kustomization.yaml",
			"gpuWorkerMemory=112Gi", "gpuWorkerMemory=64Gi",
			"DaemonSet/worker-gpu: requests memory \"64Gi\" is below 3 slot(s) x 16 GiB + 60 GiB = 108 GiB"},
		{"metrics on loopback", "worker-cpu.yaml",
			"value: 0.0.0.0:9464", "value: 127.0.0.1:9464",
			"Deployment/worker-cpu: metrics_listen: 127.0.0.1:9464 listens on loopback only"},
		{"metrics moved away from the probes", "worker-gpu.yaml",
			"value: 0.0.0.0:9464", "value: 0.0.0.0:9465",
			"DaemonSet/worker-gpu: readiness probe is not /healthz on the metrics port 9465"},
		{"AckWait differs", "config/coordinator.env",
			"C2_ACK_WAIT=15s", "C2_ACK_WAIT=2m",
			"ack_wait \"15s\" differs from the coordinator's \"2m\""},
		{"NATS route missing", "config/nats.conf",
			"    nats://nats-2.nats-headless:6222\n", "",
			"StatefulSet/nats: nats.conf routes lack nats://nats-2.nats-headless:6222"},
		{"DaemonSet budget as maxUnavailable", "worker-gpu.yaml",
			"  minAvailable: 1", "  maxUnavailable: 1",
			"PodDisruptionBudget/worker-gpu: covers DaemonSet pods (DaemonSet/worker-gpu): only an integer minAvailable works there"},
		{"ConfigMap name misspelt", "coordinator.yaml",
			"name: coordinator-env\n", "name: coordinator-envs\n",
			"Deployment/coordinator: container coordinator: envFrom ConfigMap coordinator-envs does not exist"},
		{"Redis may evict", "redis.yaml",
			"- noeviction", "- allkeys-lru",
			"StatefulSet/redis: redis-server without --maxmemory-policy noeviction"},
		{"Service targets an undeclared port", "jaeger.yaml",
			"targetPort: ui", "targetPort: web",
			"Service/jaeger: port ui targets web, which Deployment/jaeger does not declare"},
		{"Prometheus job misses the coordinator", "config/prometheus.yml",
			"regex: coordinator", "regex: coordinatr",
			"Deployment/coordinator: asks to be scraped, and no job of prometheus.yml keeps it"},
		{"image no Dockerfile builds", "kustomization.yaml",
			"newName: registry.example.com/c2cluster/worker-cpu", "newName: registry.example.com/c2cluster/worker-arm",
			"Deployment/worker-cpu: image registry.example.com/c2cluster/worker-arm:dev is not one deploy/docker builds"},
		{"setting that reaches no object", "worker-cpu.yaml",
			"        - name: tmp\n          emptyDir: {}\n",
			"        - name: tmp\n          emptyDir: {}\n        - name: extra\n          hostPath:\n            path: SET-BY-KUSTOMIZATION\n",
			"Deployment/worker-cpu: still holds SET-BY-KUSTOMIZATION"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, root, t.TempDir())
			if tc.file != "" {
				edit(t, filepath.Join(dir, tc.file), tc.old, tc.new)
			}
			objs, err := render(dir)
			if err != nil {
				t.Fatal(err)
			}
			c := &cluster{objs: objs, root: root, k8sDir: dir}
			problems := c.all()
			if tc.want == "" {
				if len(problems) == 0 {
					t.Logf("no problem, as it should be")
				}
				for _, p := range problems {
					t.Error(p)
				}
				return
			}
			for _, p := range problems {
				if strings.Contains(p, tc.want) {
					t.Logf("caught: %s", p)
					return
				}
			}
			t.Errorf("want a problem containing %q, got %d:\n%s", tc.want, len(problems), strings.Join(problems, "\n"))
		})
	}
}
