// Package buildinfo says what a c2cluster binary was built from: the
// module's version, the VCS commit (marked +dirty when the working tree had
// changes) and its time, and the Go toolchain — all read from the binary's
// own build information (runtime/debug.ReadBuildInfo), so no -ldflags are
// needed. Every c2cluster binary answers -version (or --version) with
// Line:
//
//	coordinator v0.0.0-20261204212805-f168005bbabe+dirty commit f168005bbabef2f035d7a8355f866cb5922ed3de+dirty (2026-12-04T21:28:05Z) go1.26.8 linux/amd64
//
// A binary built with `go build` in a git checkout carries the commit, and
// Go derives the module version from it (a pseudo-version, or the tag on
// the commit); one built without VCS information (outside a checkout, with
// -buildvcs=false, or a test binary) says "(devel) commit unknown".
package buildinfo

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Unknown stands for a value the build information does not carry.
const Unknown = "unknown"

// Info is what a binary was built from.
type Info struct {
	// Module is the main module's path; Version its version: a tag such as
	// v1.2.3, a pseudo-version derived from the commit, or "(devel)".
	Module, Version string
	// Revision is the VCS commit ("unknown" when not stamped), Time its
	// commit time (RFC 3339, "" when not stamped) and Modified whether the
	// working tree differed from it.
	Revision, Time string
	Modified       bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
	// Platform is GOOS/GOARCH.
	Platform string
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts an Info from Go's build information; nil (a binary
// built without module support) gives an Info of unknowns.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	i := Info{Module: Unknown, Version: Unknown, Revision: Unknown, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return i
	}
	if bi.Main.Path != "" {
		i.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		i.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		i.GoVersion = bi.GoVersion
	}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if s.Value != "" {
				i.Revision = s.Value
			}
		case "vcs.time":
			i.Time = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" && goarch != "" {
		i.Platform = goos + "/" + goarch
	}
	return i
}

// Commit is the revision with "+dirty" when the working tree had changes.
func (i Info) Commit() string {
	if i.Modified && i.Revision != Unknown {
		return i.Revision + "+dirty"
	}
	return i.Revision
}

// String is "VERSION commit COMMIT[+dirty] [(TIME)] GOVERSION GOOS/GOARCH".
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s commit %s", i.Version, i.Commit())
	if i.Time != "" {
		fmt.Fprintf(&b, " (%s)", i.Time)
	}
	fmt.Fprintf(&b, " %s %s", i.GoVersion, i.Platform)
	return b.String()
}

// Short names the build in one word, for the worker registry and trace
// resources: the module version (a tag or pseudo-version) when there is
// one, else "devel-" and the commit's first 12 digits (+dirty), else
// "(devel)".
func (i Info) Short() string {
	if i.Version != "(devel)" && i.Version != Unknown {
		return i.Version
	}
	if i.Revision == Unknown {
		return i.Version
	}
	c := i.Revision
	if len(c) > 12 {
		c = c[:12]
	}
	if i.Modified {
		c += "+dirty"
	}
	return "devel-" + c
}

// Line is the -version answer of the binary called name.
func Line(name string) string { return name + " " + Read().String() }

// Requested reports whether a command line asks for the version: an
// argument -version or --version (or =true) before any "--".
func Requested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-version", "--version", "-version=true", "--version=true":
			return true
		}
	}
	return false
}

// Register adds -version to fs's flags, so that its usage lists it; the
// binary answers it (Requested) before parsing anything else.
func Register(fs *flag.FlagSet) {
	fs.Bool("version", false, "print the version (module, VCS commit, Go) and exit")
}
