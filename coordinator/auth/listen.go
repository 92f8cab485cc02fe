package auth

import (
	"fmt"
	"net"
	"strings"
)

// IsLoopback reports whether a listen address (host:port) is on a
// loopback interface only: 127.0.0.0/8, ::1 or localhost. An empty host
// (":8080"), 0.0.0.0, :: and every other name listen beyond the machine.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckListen is the rule of an open listener: one whose requests are not
// authenticated (protected false) may listen on a loopback address only,
// unless insecure says the operator wants it open. what names the
// listener and how to protect it, for the error.
func CheckListen(what, addr string, protected, insecure bool, howToProtect string) error {
	if protected || insecure || IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("refusing to serve %s on %s without authentication: anyone who can reach that address could submit, read and cancel every job; %s, listen on a loopback address, or give -insecure to serve it open on purpose",
		what, addr, howToProtect)
}
