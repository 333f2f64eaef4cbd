package badinput

import (
	"net"
	"strings"
)

// webuiCases: the address of the Web UI the embedded Temporal server serves.
var webuiCases = []badCase{
	{
		name:  "ui-addr-in-use",
		input: "`--ui-addr` naming an address another process listens on",
		want:  "exit 1 before the embedded server starts: the error names the address, says it is in use and names `--ui-addr` (another address, or `off`); nothing is indexed",
		setup: func(s *sandbox) []string {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				s.t.Fatal(err)
			}
			s.t.Cleanup(func() { _ = l.Close() })
			s.vars["ADDR"] = l.Addr().String()
			r := s.simpleRepo("r")
			return []string{"index", "--ui-addr", l.Addr().String(), r.Dir}
		},
		code:  1,
		names: []string{"web UI cannot listen on {{ADDR}}: ", "address already in use", "--ui-addr"},
		check: func(s *sandbox, r result) {
			s.notIndexed("r")
			if strings.Contains(r.stderr, "fleet ") {
				s.t.Errorf("a fleet started:\n%v", r)
			}
		},
	},
	{
		name:  "ui-addr-host-name",
		input: "`--ui-addr` with a host name that is not an IP address (`example.com:8233`)",
		want:  "exit 1 before the embedded server starts: the error quotes the address and says the host must be an IP address (or localhost); nothing is indexed",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			return []string{"index", "--ui-addr", "example.com:8233", r.Dir}
		},
		code:  1,
		names: []string{`web UI address "example.com:8233": host must be an IP address`},
		check: func(s *sandbox, r result) { s.notIndexed("r") },
	},
}
