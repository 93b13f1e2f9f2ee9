package scanplan

import (
	"github.com/fluxgate-io/fluxgate/engine/internal/laketier"
	"github.com/fluxgate-io/fluxgate/engine/internal/tables"
)

// Env is what planning uses, built once by the engine: the open tables and
// the lake tier.
type Env struct {
	Tables *tables.Set
	Lakes  *laketier.Lakes
}
