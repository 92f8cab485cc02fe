package singlenode

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// child is a server process this process started (a private Redis or
// Jaeger): its command and the result of its Wait.
type child struct {
	cmd  *exec.Cmd
	done chan error
}

// startChild runs bin with args, its stdout and stderr going to a new file
// at logPath (closed when the process ends).
func startChild(bin string, args []string, logPath string) (*child, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	c := &child{cmd: exec.Command(bin, args...), done: make(chan error, 1)}
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := c.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { c.done <- c.cmd.Wait(); logf.Close() }()
	return c, nil
}

// exited reports whether the process has ended, and its Wait error.
func (c *child) exited() (bool, error) {
	select {
	case err := <-c.done:
		c.done <- err
		return true, err
	default:
		return false, nil
	}
}

// stop interrupts the process and waits for it, killing it after 10 s. It
// is a no-op on a nil or already stopped child.
func (c *child) stop() {
	if c == nil || c.cmd == nil || c.cmd.Process == nil {
		return
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.cmd = nil
}
