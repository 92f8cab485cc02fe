package k8s

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/yannh/kubeconform/pkg/resource"
	"github.com/yannh/kubeconform/pkg/validator"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// object is one rendered Kubernetes object: its YAML and the fields the
// checks read (decoded leniently: kubeconform judges the schema).
type object struct {
	YAML []byte
	Raw  map[string]any

	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   meta   `json:"metadata"`
	Spec       spec   `json:"spec"`
	Data       map[string]string
	BinaryData map[string]string `json:"binaryData"`
	Rules      []struct {
		APIGroups []string `json:"apiGroups"`
		Resources []string `json:"resources"`
		Verbs     []string `json:"verbs"`
	} `json:"rules"`
	RoleRef struct {
		Kind, Name string
	} `json:"roleRef"`
	Subjects []struct {
		Kind, Name string
	} `json:"subjects"`
}

type meta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// spec holds the fields of the workload, Service, PVC and PDB specs the
// checks use.
type spec struct {
	// Deployment, StatefulSet, DaemonSet.
	Replicas    *int   `json:"replicas"`
	ServiceName string `json:"serviceName"`
	Selector    *struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"-"`
	SelectorRaw json.RawMessage `json:"selector"`
	Template    *struct {
		Metadata meta    `json:"metadata"`
		Spec     podSpec `json:"spec"`
	} `json:"template"`
	VolumeClaimTemplates []struct {
		Metadata meta `json:"metadata"`
		Spec     struct {
			StorageClassName *string `json:"storageClassName"`
		} `json:"spec"`
	} `json:"volumeClaimTemplates"`

	// Service (Selector is a plain map there).
	ClusterIP                string `json:"clusterIP"`
	PublishNotReadyAddresses bool   `json:"publishNotReadyAddresses"`
	Ports                    []struct {
		Name       string   `json:"name"`
		Port       int      `json:"port"`
		TargetPort intOrStr `json:"targetPort"`
	} `json:"ports"`
	ServiceSelector map[string]string `json:"-"`

	// PersistentVolumeClaim.
	StorageClassName *string `json:"storageClassName"`

	// PodDisruptionBudget.
	MinAvailable   *intOrStr `json:"minAvailable"`
	MaxUnavailable *intOrStr `json:"maxUnavailable"`
}

type podSpec struct {
	TerminationGracePeriodSeconds *int64      `json:"terminationGracePeriodSeconds"`
	ServiceAccountName            string      `json:"serviceAccountName"`
	Containers                    []container `json:"containers"`
	InitContainers                []container `json:"initContainers"`
	Volumes                       []volume    `json:"volumes"`
	NodeSelector                  map[string]string
	Affinity                      *struct {
		NodeAffinity *struct {
			Required *struct {
				NodeSelectorTerms []struct {
					MatchExpressions []struct {
						Key      string   `json:"key"`
						Operator string   `json:"operator"`
						Values   []string `json:"values"`
					} `json:"matchExpressions"`
				} `json:"nodeSelectorTerms"`
			} `json:"requiredDuringSchedulingIgnoredDuringExecution"`
		} `json:"nodeAffinity"`
	} `json:"affinity"`
	Tolerations []struct {
		Key, Operator, Effect string
	} `json:"tolerations"`
}

type container struct {
	Name    string   `json:"name"`
	Image   string   `json:"image"`
	Command []string `json:"command"`
	Args    []string `json:"args"`
	Env     []struct {
		Name      string          `json:"name"`
		Value     string          `json:"value"`
		ValueFrom json.RawMessage `json:"valueFrom"`
	} `json:"env"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name     string `json:"name"`
			Optional bool   `json:"optional"`
		} `json:"configMapRef"`
	} `json:"envFrom"`
	Ports []struct {
		Name          string `json:"name"`
		ContainerPort int    `json:"containerPort"`
	} `json:"ports"`
	StartupProbe   *probe `json:"startupProbe"`
	ReadinessProbe *probe `json:"readinessProbe"`
	LivenessProbe  *probe `json:"livenessProbe"`
	Resources      struct {
		Requests map[string]intOrStr `json:"requests"`
		Limits   map[string]intOrStr `json:"limits"`
	} `json:"resources"`
	VolumeMounts []struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
		SubPath   string `json:"subPath"`
		ReadOnly  bool   `json:"readOnly"`
	} `json:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string   `json:"path"`
		Port intOrStr `json:"port"`
	} `json:"httpGet"`
	TCPSocket *struct {
		Port intOrStr `json:"port"`
	} `json:"tcpSocket"`
	GRPC *struct {
		Port int `json:"port"`
	} `json:"grpc"`
	Exec *struct {
		Command []string `json:"command"`
	} `json:"exec"`
}

type volume struct {
	Name      string `json:"name"`
	ConfigMap *struct {
		Name     string `json:"name"`
		Optional bool   `json:"optional"`
	} `json:"configMap"`
	HostPath *struct {
		Path string `json:"path"`
		Type string `json:"type"`
	} `json:"hostPath"`
	EmptyDir              json.RawMessage `json:"emptyDir"`
	PersistentVolumeClaim *struct {
		ClaimName string `json:"claimName"`
	} `json:"persistentVolumeClaim"`
}

// intOrStr is an int-or-string or a quantity: a YAML number or string.
type intOrStr string

func (v *intOrStr) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = intOrStr(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*v = intOrStr(n.String())
	return nil
}

// isInt reports whether v is a plain integer (not a name, not a percentage).
func (v intOrStr) isInt() bool {
	_, err := strconv.Atoi(string(v))
	return err == nil
}

func (o *object) id() string { return o.Kind + "/" + o.Metadata.Name }

// render builds the kustomization in dir as `kubectl kustomize
// --load-restrictor LoadRestrictionsNone` does and decodes each object.
func render(dir string) ([]*object, error) {
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	var objs []*object
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		o, err := decode(y)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		objs = append(objs, o)
	}
	return objs, nil
}

func decode(y []byte) (*object, error) {
	o := &object{YAML: y}
	if err := yaml.Unmarshal(y, &o.Raw); err != nil {
		return nil, err
	}
	// Fields of the wrong type stay empty here: kubeconform reports them.
	_ = yaml.Unmarshal(y, o)
	if d, ok := o.Raw["data"].(map[string]any); ok && o.Kind == "ConfigMap" {
		o.Data = map[string]string{}
		for k, v := range d {
			o.Data[k] = fmt.Sprint(v)
		}
	}
	if len(o.Spec.SelectorRaw) > 0 {
		if o.Kind == "Service" {
			_ = json.Unmarshal(o.Spec.SelectorRaw, &o.Spec.ServiceSelector)
		} else {
			o.Spec.Selector = &struct {
				MatchLabels map[string]string `json:"matchLabels"`
			}{}
			_ = json.Unmarshal(o.Spec.SelectorRaw, o.Spec.Selector)
		}
	}
	return o, nil
}

// validate runs kubeconform, strict, on every object against one
// release's schemas and returns one line per object that is not valid.
func validate(t *testing.T, api *openAPI, objs []*object) []string {
	t.Helper()
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.APIVersion+"|"+o.Kind] = true
	}
	list := make([]string, 0, len(kinds))
	for k := range kinds {
		list = append(list, k)
	}
	dir := t.TempDir()
	if err := api.writeSchemas(dir, list); err != nil {
		t.Fatal(err)
	}
	v, err := validator.New([]string{schemaLocation(dir)}, validator.Opts{
		Strict:            true,
		KubernetesVersion: api.version,
	})
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, o := range objs {
		res := v.ValidateResource(resource.Resource{Path: o.id(), Bytes: o.YAML})
		switch res.Status {
		case validator.Valid:
		case validator.Invalid:
			// The error's text has every failing field, nested causes
			// included (ValidationErrors has only the top-level ones).
			problems = append(problems, fmt.Sprintf("%s: invalid: %v", o.id(), res.Err))
		default:
			problems = append(problems, fmt.Sprintf("%s: not validated: %v", o.id(), res.Err))
		}
	}
	return problems
}

// copyTree copies the folders of the repository the kustomization reads
// (deploy/k8s and deploy/prometheus) under dst, keeping their layout.
func copyTree(t *testing.T, root, dst string) string {
	t.Helper()
	for _, d := range []string{"deploy/k8s", "deploy/prometheus"} {
		src := filepath.Join(root, d)
		err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			target := filepath.Join(dst, rel)
			if info.IsDir() {
				return os.MkdirAll(target, 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dst, "deploy", "k8s")
}

// edit replaces old by new in a file, once; old must be there.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, []byte(old)) != 1 {
		t.Fatalf("%s: %q occurs %d times, want once", path, old, bytes.Count(b, []byte(old)))
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}
