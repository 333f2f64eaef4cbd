package devserver

import (
	"fmt"
	"net"
	"runtime"
	"strconv"
)

// freePorts returns n distinct TCP ports on host that were free a moment ago.
// Temporal wants port numbers in its config rather than listeners, so there is
// a window in which another process could take one; to make that unlikely on
// Linux each port is left with a server-side socket in TIME_WAIT, which keeps
// the kernel from handing it out again for bind(:0) while an explicit bind
// with SO_REUSEADDR (Go's default for listeners) still succeeds.
func freePorts(host string, n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("pick a free port on %s: %w", host, err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	if runtime.GOOS == "linux" {
		for _, l := range ls {
			parkInTimeWait(l)
		}
	}
	return ports, nil
}

// parkInTimeWait connects to l and closes the accepted end first, which
// leaves that end (bound to l's port) in TIME_WAIT. Failures are harmless:
// the port is still free, just less protected.
func parkInTimeWait(l net.Listener) {
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return
	}
	defer func() { _ = c.Close() }()
	s, err := l.Accept()
	if err != nil {
		return
	}
	_ = s.Close()
}

// checkPortFree reports a clear error when hostPort cannot be listened on.
func checkPortFree(hostPort string) error {
	l, err := net.Listen("tcp", hostPort)
	if err != nil {
		return err
	}
	return l.Close()
}

// parseAddress splits a frontend address and normalises the host to an IP,
// since Temporal binds on IPs, not names.
func parseAddress(addr string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("address %q: want host:port: %w", addr, err)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("address %q: port %q is not a number in 0..65535", addr, p)
	}
	switch h {
	case "", "localhost":
		h = "127.0.0.1"
	}
	if net.ParseIP(h) == nil {
		return "", 0, fmt.Errorf("address %q: host must be an IP address (or localhost)", addr)
	}
	return h, port, nil
}

// dialHost is the host clients use to reach a listener bound on host: an
// unspecified address (0.0.0.0, ::) is reached through loopback.
func dialHost(host string) string {
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsUnspecified() {
		return host
	}
	if ip.To4() != nil {
		return "127.0.0.1"
	}
	return "::1"
}
