package cli

import (
	"testing"
)

// FuzzDecodeFile: any configuration file decodes or fails with an error,
// never a panic.
func FuzzDecodeFile(f *testing.F) {
	f.Add([]byte("nats: nats://q:4222\nshapes: [32GiB]\nparams_dir: /p\ndevices: [0, 1]\ndrain_timeout: 90s\n"))
	f.Add([]byte("interlock: split\nvram_budget_bytes: 123\notlp_insecure: false\n"))
	f.Add([]byte(""))
	f.Add([]byte("devices: [a]\n"))
	f.Add([]byte("ack_wait: forever\n"))
	f.Add([]byte("{{{"))
	f.Add([]byte("shapes: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var cfg File
		_ = decodeFile(b, &cfg)
	})
}
