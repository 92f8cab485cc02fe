package circuit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMakeParamsCommand(t *testing.T) {
	require.Equal(t, "c2-params -dir /var/lib/c2/params -shapes test-micro", MakeParamsCommand("/var/lib/c2/params", "test-micro"))
	require.Equal(t, `c2-params -dir '/srv/my params/it'\''s' -shapes test-mini`, MakeParamsCommand("/srv/my params/it's", "test-mini"))
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.Equal(t, "c2-params -dir "+filepath.Join(wd, "params")+" -shapes test-micro", MakeParamsCommand("params", "test-micro"))
}
