package faults_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/telemetry"
)

type httpResult struct {
	code int
	body string
}

func httptestGet(url string) (httpResult, error) {
	c := http.Client{Timeout: 5 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		return httpResult{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return httpResult{res.StatusCode, string(b)}, err
}

// gaugeValue reads one labelled series of a gauge or counter from m's
// registry; -1 when absent.
func gaugeValue(t testing.TB, m *telemetry.Metrics, name, label, value string) float64 {
	t.Helper()
	mfs, err := m.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					if g := s.GetGauge(); g != nil {
						return g.GetValue()
					}
					return s.GetCounter().GetValue()
				}
			}
		}
	}
	return -1
}
