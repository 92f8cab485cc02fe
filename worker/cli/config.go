package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/c2cluster/c2cluster/pkg/connflags"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/memlimit"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/worker/node"
)

// File is the worker's configuration: the YAML file's layout. Connection
// settings sit at the top; the worker's own settings (node.Config) are
// inline beside them.
//
//	nats: tls://10.0.0.1:4222
//	nats_user: c2
//	nats_password_file: /etc/c2/nats-password
//	nats_ca_file: /etc/c2/ca.pem
//	redis: rediss://10.0.0.2:6380
//	redis_password_file: /etc/c2/redis-password
//	shapes: [32GiB]
//	params_dir: /var/lib/c2/params
//	backend: auto
//	gpu_workers_per_device: 3
//	interlock: compute
type File struct {
	// NATS is the NATS server URL (key nats, default
	// nats://127.0.0.1:4222), its credentials and TLS (nats_user,
	// nats_password_file, nats_creds_file, nats_ca_file, ...).
	NATS queue.ConnConfig `yaml:",inline"`
	// Redis is the Redis address (key redis, host:port or a redis:// or
	// rediss:// URL; default 127.0.0.1:6379), or Sentinel or Cluster
	// addresses, its credentials and TLS (redis_user,
	// redis_password_file, redis_ca_file, redis_cluster, ...).
	Redis jobstore.DialConfig `yaml:",inline"`
	// RedisPrefix prefixes every Redis key. Default "c2" (the
	// coordinator's must match).
	RedisPrefix string `yaml:"redis_prefix"`
	// OTLP is the OTLP/gRPC trace collector (Jaeger's host:4317); empty:
	// no export.
	OTLP string `yaml:"otlp"`
	// OTLPInsecure disables TLS to the collector. Default true.
	OTLPInsecure *bool `yaml:"otlp_insecure"`
	// MetricsListen serves /metrics and /healthz; "off": none. Default
	// 127.0.0.1:9464; port 0 takes a free port (logged), for several
	// workers on one host.
	MetricsListen string `yaml:"metrics_listen"`
	// LogLevel is debug, info, warn or error. Default info.
	LogLevel string `yaml:"log_level"`
	// LogFormat is text or json. Default text.
	LogFormat string `yaml:"log_format"`
	// AckWait of partition tasks (the workers create the consumers, so
	// this is where it is set). Default 60 s.
	AckWait time.Duration `yaml:"ack_wait"`
	// MaxDeliver deliveries of a partition before it fails its job.
	// Default 5.
	MaxDeliver int `yaml:"max_deliver"`
	// MemoryLimit is the Go soft memory limit (pkg/memlimit): auto (90 %
	// of the host's or cgroup's memory, unless $GOMEMLIMIT is set), off
	// (Go's default: $GOMEMLIMIT or none), or a size such as 112GiB.
	// Default auto.
	MemoryLimit string `yaml:"memory_limit"`

	node.Config `yaml:",inline"`
}

// Defaults of File.
const (
	NATSDefault          = queue.URLDefault
	RedisDefault         = jobstore.AddrDefault
	MetricsListenDefault = "127.0.0.1:9464"
)

// setting is one configuration value settable by flag and environment.
type setting struct {
	flag, env, help string
	set             func(string) error
	// isBool settings may be given as a bare flag (-trusted-params).
	isBool bool
}

// parsed returns a setter that stores parse's value in *p (and leaves *p
// alone when parse fails).
func parsed[T any](p *T, parse func(string) (T, error)) func(string) error {
	return func(v string) error {
		x, err := parse(v)
		if err != nil {
			return err
		}
		*p = x
		return nil
	}
}

func (f *File) settings() []setting {
	str := func(p *string) func(string) error { return func(v string) error { *p = v; return nil } }
	list := func(p *[]string) func(string) error { return func(v string) error { *p = splitList(v); return nil } }
	dur := func(p *time.Duration) func(string) error { return parsed(p, time.ParseDuration) }
	num := func(p *int) func(string) error { return parsed(p, strconv.Atoi) }
	num64 := func(p *int64) func(string) error {
		return parsed(p, func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) })
	}
	devices := parsed(&f.Devices, func(v string) ([]int, error) {
		var out []int
		for _, s := range splitList(v) {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("device %q is not an index", s)
			}
			out = append(out, n)
		}
		return out, nil
	})
	var out []setting
	add := func(flag, env, help string, set func(string) error) {
		out = append(out, setting{flag: flag, env: env, help: help, set: set})
	}
	addBool := func(flag, env, help string, set func(string) error) {
		out = append(out, setting{flag: flag, env: env, help: help, set: set, isBool: true})
	}
	add("nats", "C2_NATS_URL", "NATS server URL, or several separated by commas (default "+NATSDefault+")", str(&f.NATS.URL))
	for _, c := range connflags.NATS(&f.NATS) {
		out = append(out, setting{flag: c.Flag, env: c.Env, help: c.Help, set: c.Set, isBool: c.Bool})
	}
	add("redis", "C2_REDIS_ADDR", "Redis address: host:port, or a redis:// or rediss:// (TLS) URL (default "+RedisDefault+" unless Sentinel or Cluster is set)", str(&f.Redis.Addr))
	for _, c := range connflags.Redis(&f.Redis) {
		out = append(out, setting{flag: c.Flag, env: c.Env, help: c.Help, set: c.Set, isBool: c.Bool})
	}
	add("redis-prefix", "C2_REDIS_PREFIX", "prefix of every Redis key; must match the coordinator's (default "+jobstore.PrefixDefault+")", str(&f.RedisPrefix))
	add("otlp", "C2_OTLP_ENDPOINT", "OTLP/gRPC trace collector host:port, e.g. Jaeger's 127.0.0.1:4317; empty: no export", str(&f.OTLP))
	addBool("otlp-insecure", "C2_OTLP_INSECURE", "no TLS to the collector (default true)",
		parsed(&f.OTLPInsecure, func(v string) (*bool, error) { b, err := strconv.ParseBool(v); return &b, err }))
	add("metrics-listen", "C2_METRICS_LISTEN", "address of /metrics and /healthz; port 0 (127.0.0.1:0) takes a free port, logged at start; 'off' disables (default "+MetricsListenDefault+")", str(&f.MetricsListen))
	add("log-level", "C2_LOG_LEVEL", "debug, info, warn or error (default info)", str(&f.LogLevel))
	add("log-format", "C2_LOG_FORMAT", "text or json (default text)", str(&f.LogFormat))
	add("ack-wait", "C2_ACK_WAIT", "JetStream AckWait of partition tasks (default "+queue.AckWaitDefault.String()+")", dur(&f.AckWait))
	add("max-deliver", "C2_MAX_DELIVER", "deliveries of a partition before it fails its job (default "+strconv.Itoa(queue.MaxDeliverDefault)+")", num(&f.MaxDeliver))
	add("memory-limit", "C2_MEMORY_LIMIT", "Go soft memory limit: auto (90% of the host's or cgroup's memory unless $GOMEMLIMIT is set), off, or a size such as 112GiB (default auto)",
		parsed(&f.MemoryLimit, func(v string) (string, error) { _, err := memlimit.Parse(v); return v, err }))

	add("id", "C2_WORKER_ID", "worker id in the registry (default <host>-<pid>)", str(&f.ID))
	add("shapes", "C2_SHAPES", "comma-separated proof shapes to prove, e.g. 32GiB; required", list(&f.Shapes))
	add("params-dir", "C2_PARAMS_DIR", "folder of the test shapes' <shape>.params (and .vk); required", str(&f.ParamsDir))
	add("official-params-dir", "C2_OFFICIAL_PARAMS_DIR", "folder of Filecoin's official parameter files, for the official shapes (default $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters)", str(&f.OfficialParamsDir))
	addBool("trusted-params", "C2_TRUSTED_PARAMS", "skip the subgroup check of a test shape's parameter points at load (Filecoin's files are checked once, then remembered)", parsed(&f.TrustedParams, strconv.ParseBool))
	add("h-form", "C2_H_FORM", "H query of the proving keys: auto (a parameter file's H file made by c2-params -convert-h when present and valid, else monomial), monomial or coset-lagrange (the H file is required) (default auto)", str(&f.HForm))
	add("backend", "C2_BACKEND", "auto, cpu or cuda (default auto: CUDA when present, else CPU)", str(&f.Backend))
	add("devices", "C2_DEVICES", "comma-separated device indexes (default: all the backend finds)", devices)
	add("gpu-workers-per-device", "C2_GPU_WORKERS_PER_DEVICE", "slots per device (default 3 on a GPU, 1 on the CPU)", num(&f.GPUWorkersPerDevice))
	add("interlock", "C2_INTERLOCK", "device lock: none, exclusive, compute or split (default compute)", str(&f.Interlock))
	add("vram-budget-bytes", "C2_VRAM_BUDGET_BYTES", "device memory proofs in flight may reserve per device (default 0: no limit)", num64(&f.VRAMBudget))
	add("cpu-threads", "C2_CPU_THREADS", "goroutines per proof on the CPU backend (default: all cores)", num(&f.CPUThreads))
	add("cuda-library", "C2_CUDA_LIBRARY", "path of libc2groth16.so (default $C2G_CUDA_LIB, then the loader's path)", str(&f.CUDALibrary))
	add("residency", "C2_RESIDENCY", "parameters on a GPU: auto, device or pinned (default auto)", str(&f.Residency))
	add("params-memory-budget-bytes", "C2_PARAMS_MEMORY_BUDGET_BYTES", "device memory for resident parameters per device (default: the backend decides)", num64(&f.ParamsMemoryBudget))
	addBool("pin-buffers", "C2_PIN_BUFFERS", "page-lock the partition buffer sets so the CUDA upload DMAs from them (default true)", func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		f.PinBuffers = &b
		return nil
	})
	add("lanes", "C2_LANES", "priority lanes polled in order (default high,normal,low)", list(&f.Lanes))
	add("heartbeat-interval", "C2_HEARTBEAT_INTERVAL", "registration refresh (default "+node.HeartbeatIntervalDefault.String()+")", dur(&f.HeartbeatInterval))
	add("drain-timeout", "C2_DRAIN_TIMEOUT", "on SIGTERM, how long in-flight partitions may finish before they are handed back (default "+node.DrainTimeoutDefault.String()+")", dur(&f.DrainTimeout))
	add("abort-timeout", "C2_ABORT_TIMEOUT", "how long aborted partitions may take to stop (default "+node.AbortTimeoutDefault.String()+")", dur(&f.AbortTimeout))
	add("retry-delay", "C2_RETRY_DELAY", "redelivery delay after a transient failure (default: the queue's 5s)", dur(&f.RetryDelay))
	add("input-cache", "C2_INPUT_CACHE", "jobs whose parsed C1 output is kept (default 4)", num(&f.InputCache))
	return out
}

// Load reads the configuration: the YAML file named by -config (or
// $C2_WORKER_CONFIG), then environment variables, then flags.
func Load(args []string, lookupEnv func(string) (string, bool), fs *flag.FlagSet) (*File, error) {
	f := &File{}
	sets := f.settings()
	var configPath string
	fs.StringVar(&configPath, "config", "", "YAML configuration file ($C2_WORKER_CONFIG); flags and environment override it")
	byFlag := map[string]setting{}
	flagVals := map[string]*string{}
	for _, s := range sets {
		v := new(string)
		flagVals[s.flag] = v
		byFlag[s.flag] = s
		usage := fmt.Sprintf("%s ($%s)", s.help, s.env)
		if s.isBool {
			fs.Var(boolString{v}, s.flag, usage)
		} else {
			fs.StringVar(v, s.flag, "", usage)
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if configPath == "" {
		configPath, _ = lookupEnv("C2_WORKER_CONFIG")
	}
	if configPath != "" {
		b, err := os.ReadFile(configPath)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if err := decodeFile(b, f); err != nil {
			return nil, fmt.Errorf("config %s: %w", configPath, err)
		}
	}
	for _, s := range sets {
		if v, ok := lookupEnv(s.env); ok && v != "" {
			if err := s.set(v); err != nil {
				return nil, fmt.Errorf("$%s=%q: %w", s.env, v, err)
			}
		}
	}
	var ferr error
	fs.Visit(func(fl *flag.Flag) {
		if v, ok := flagVals[fl.Name]; ok && ferr == nil {
			if err := byFlag[fl.Name].set(*v); err != nil {
				ferr = fmt.Errorf("-%s=%q: %w", fl.Name, *v, err)
			}
		}
	})
	if ferr != nil {
		return nil, ferr
	}
	f.fillDefaults()
	if _, err := memlimit.Parse(f.MemoryLimit); err != nil { // from the file (flags and variables were checked as set)
		return nil, fmt.Errorf("memory_limit: %w", err)
	}
	if err := f.NATS.Validate(); err != nil {
		return nil, err
	}
	if err := f.Redis.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// boolString is a flag that may be given bare (-x means -x=true) and keeps
// its text for the setting's own parser.
type boolString struct{ v *string }

func (b boolString) String() string {
	if b.v == nil {
		return ""
	}
	return *b.v
}
func (b boolString) Set(s string) error { *b.v = s; return nil }
func (b boolString) IsBoolFlag() bool   { return true }

// MaxConfigBytes bounds a configuration file.
const MaxConfigBytes = 1 << 20

// decodeFile decodes a YAML configuration into f. Unknown keys are errors
// (a misspelt setting must not be silently ignored).
func decodeFile(b []byte, f *File) error {
	if len(b) > MaxConfigBytes {
		return fmt.Errorf("%d bytes exceeds the limit of %d", len(b), MaxConfigBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func (f *File) fillDefaults() {
	if f.NATS.URL == "" {
		f.NATS.URL = NATSDefault
	}
	if f.Redis.Addr == "" && f.Redis.SentinelMaster == "" && len(f.Redis.SentinelAddrs) == 0 && len(f.Redis.ClusterAddrs) == 0 {
		f.Redis.Addr = RedisDefault
	}
	if f.RedisPrefix == "" {
		f.RedisPrefix = jobstore.PrefixDefault
	}
	if f.OTLPInsecure == nil {
		t := true
		f.OTLPInsecure = &t
	}
	if f.MetricsListen == "" {
		f.MetricsListen = MetricsListenDefault
	}
	if f.LogLevel == "" {
		f.LogLevel = "info"
	}
	if f.LogFormat == "" {
		f.LogFormat = "text"
	}
	if f.MemoryLimit == "" {
		f.MemoryLimit = memlimit.ModeAuto
	}
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
