package flight

import (
	"testing"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// TestEveryActionHasAHandler: the server runs exactly the actions of
// protocol.Actions, so that ListActions lists what DoAction runs.
func TestEveryActionHasAHandler(t *testing.T) {
	listed := map[string]bool{}
	for _, a := range protocol.Actions {
		if listed[a.Name] {
			t.Errorf("protocol.Actions lists %s twice", a.Name)
		}
		listed[a.Name] = true
		if handlers[a.Name] == nil {
			t.Errorf("no handler for %s", a.Name)
		}
	}
	for name := range handlers {
		if !listed[name] {
			t.Errorf("handler for %s, which protocol.Actions does not list", name)
		}
	}
}
