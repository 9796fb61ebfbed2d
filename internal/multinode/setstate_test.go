package multinode

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
)

// TestSetStateSentAtRegistration: a state an operator set with SetState
// (CMD_UM_CONF_STATE) reaches every node scheduler, and one registering
// afterwards hears it after its CMD_ADM_CONF_ADD.
func TestSetStateSentAtRegistration(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	acts, err := h.m.SetState("c", cmt.StateCompacting)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]cmt.Message{&cmt.UMConfState{Collection: "c", State: cmt.StateCompacting}}, sent(acts, h.conn["n1"])); diff != "" {
		t.Errorf("set state (-want +got):\n%s", diff)
	}
	if _, err := h.m.SetState("c", cmt.StateRemoving); err == nil {
		t.Error("state 3 accepted")
	}
	acts = h.join("n2", true)
	if got := codes(sent(acts, h.conn["n2"])); len(got) < 2 || !cmp.Equal(got[:2], []cmt.Command{cmt.CmdAdmConfAdd, cmt.CmdUMConfState}) {
		t.Errorf("registration = %v", got)
	}
}
