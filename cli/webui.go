package cli

import (
	"errors"
	"flag"
	"fmt"

	"github.com/locus-dev/locus/internal/devserver"
)

// uiAddrUsage documents --ui-addr.
const uiAddrUsage = "with no --temporal: serve Temporal's Web UI for the embedded Temporal server at http://`ADDR` " +
	"(an empty host is 127.0.0.1, 0.0.0.0:8233 every interface); while the default's port is taken, the next free one above it, " +
	"said so; an address given that is taken is an error; empty or off: none; none with --temporal (that server has its own)"

// uiAddr is --ui-addr. given records that the flag or LOCUS_UI_ADDR set it:
// an address chosen that is taken fails the command, where the default
// moves to the next free port.
type uiAddr struct {
	addr  string
	given bool
}

func (u *uiAddr) String() string {
	if u == nil {
		return ""
	}
	return u.addr
}

func (u *uiAddr) Set(v string) error {
	u.addr, u.given = v, true
	return nil
}

// off: no UI is served.
func (u *uiAddr) off() bool { return u.addr == "" || u.addr == "off" }

// uiFlag adds --ui-addr to fs.
func uiFlag(fs *flag.FlagSet, u *uiAddr) {
	*u = uiAddr{addr: devserver.DefaultUIAddress}
	fs.Var(u, "ui-addr", uiAddrUsage)
}

// checkUIAddr checks --ui-addr before any work starts.
func checkUIAddr(u *uiAddr) error {
	if u.off() {
		return nil
	}
	return checkHostPort("--ui-addr", u.addr)
}

// uiOptions sets o's Web UI as --ui-addr says.
func (u *uiAddr) uiOptions(o *devserver.Options) {
	if u.off() {
		return
	}
	o.UIAddress, o.UIFallback = u.addr, !u.given
}

// uiStartError names --ui-addr in an error about the UI's address.
func uiStartError(err error) error {
	if errors.Is(err, devserver.ErrUIAddress) {
		return fmt.Errorf("%w; give --ui-addr another address, or --ui-addr off", err)
	}
	return err
}

// noteUI says, when the Web UI's port was taken, where it went instead.
func noteUI(srv *devserver.Server) {
	if taken := srv.UITakenAddress(); taken != "" {
		fmt.Fprintf(stderr, "web UI: %s is in use; serving on %s instead\n", taken, srv.UIAddress())
	}
}

// printWorkflowLink prints the Web UI's page of workflow id, when this
// command's embedded server serves the UI.
func (g *Globals) printWorkflowLink(id string) {
	if g.uiURL == "" {
		return
	}
	fmt.Fprintf(stderr, "web UI: %s\n", devserver.WorkflowURL(g.uiURL, g.namespace, id))
}
