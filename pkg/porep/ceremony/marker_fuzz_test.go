package ceremony

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadMarker: a marker file is outside bytes; whatever it holds,
// reading it never panics, and one that reads is a marker that writes back
// to the same value.
func FuzzReadMarker(f *testing.F) {
	f.Add([]byte(`{"format":1,"file":"x.params","size":5,"mtime_unix_ns":7,"digest":"00000000000000000000000000000000","points_checked":true,"checked_at":"2025-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"format":1,"extra":1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "m"+MarkerSuffix)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, ok := readMarker(p)
		if !ok {
			return
		}
		q, err := writeMarker(m, []string{filepath.Join(dir, "w"+MarkerSuffix)})
		if err != nil {
			t.Fatal(err)
		}
		m2, ok := readMarker(q)
		sameTime := m2.CheckedAt.Equal(m.CheckedAt)
		m.CheckedAt, m2.CheckedAt = m2.CheckedAt, m.CheckedAt
		if !ok || m2 != m || !sameTime {
			t.Fatalf("marker %+v did not round-trip: %+v", m, m2)
		}
	})
}
