package main

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// image is what the checks need to know of the image a Dockerfile builds:
// its final stage's user, environment, exposed ports and the directories it
// creates with their owners. It reads the idioms c2cluster's Dockerfiles
// use (USER, ENV, EXPOSE, `mkdir -p` and `install -d` in RUN, COPY
// --chown of a build stage's folder); anything else adds no directory.
type image struct {
	File  string
	Base  string            // the final stage's FROM
	User  int               // uid the container runs as
	Env   map[string]string // ENV of the final stage
	Ports []string          // EXPOSE of the final stage
	Dirs  map[string]int    // absolute directory → owner uid
	Entry bool              // ENTRYPOINT or CMD present
}

type stage struct {
	name  string
	base  string
	user  int
	users map[string]int // names made by useradd in this stage
	dirs  map[string]int
	env   map[string]string
	ports []string
	entry bool
}

// baseUser is the user a base image runs as when the Dockerfile sets none.
func baseUser(base string) int {
	if strings.HasPrefix(base, "gcr.io/distroless/") && strings.HasSuffix(base, ":nonroot") {
		return 65532
	}
	return 0
}

var (
	useraddUID = regexp.MustCompile(`useradd\b[^&;|]*--uid\s+(\d+)[^&;|]*?\s([a-z_][a-z0-9_-]*)\s*(?:$|&&|;)`)
	installDir = regexp.MustCompile(`install\s+-d\b([^&;|]*)`)
	mkdirP     = regexp.MustCompile(`mkdir\s+-p\s+([^&;|]*)`)
	chownCmd   = regexp.MustCompile(`chown\s+(?:-R\s+)?(\d+)(?::\d+)?\s+([^&;|]*)`)
)

// readDockerfile parses the Dockerfile at file.
func readDockerfile(file string) (*image, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") || (l == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	args := map[string]string{}
	var stages []*stage
	var st *stage
	for _, l := range lines {
		instr, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(instr) {
		case "ARG":
			k, v, _ := strings.Cut(rest, "=")
			args[k] = v
		case "FROM":
			fields := strings.Fields(rest)
			base := expandArgs(fields[0], args)
			st = &stage{base: base, user: baseUser(base), users: map[string]int{}, dirs: map[string]int{}, env: map[string]string{}}
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				st.name = fields[2]
			}
			stages = append(stages, st)
		case "USER":
			if st == nil {
				return nil, fmt.Errorf("%s: USER before FROM", file)
			}
			u, _, _ := strings.Cut(rest, ":")
			if n, err := strconv.Atoi(u); err == nil {
				st.user = n
			} else if n, ok := st.users[u]; ok {
				st.user = n
			} else if u == "nonroot" && strings.HasPrefix(st.base, "gcr.io/distroless/") {
				st.user = 65532
			} else if u == "root" {
				st.user = 0
			} else {
				return nil, fmt.Errorf("%s: USER %s: unknown user", file, rest)
			}
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				if k, v, ok := strings.Cut(kv, "="); ok {
					st.env[k] = v
				}
			}
		case "EXPOSE":
			st.ports = append(st.ports, strings.Fields(rest)...)
		case "ENTRYPOINT", "CMD":
			st.entry = true
		case "RUN":
			for _, m := range useraddUID.FindAllStringSubmatch(rest, -1) {
				n, _ := strconv.Atoi(m[1])
				st.users[m[2]] = n
			}
			for _, m := range mkdirP.FindAllStringSubmatch(rest, -1) {
				for _, d := range strings.Fields(m[1]) {
					st.dirs[path.Clean(d)] = st.user
				}
			}
			for _, m := range installDir.FindAllStringSubmatch(rest, -1) {
				owner, dirs := st.user, []string(nil)
				fs := strings.Fields(m[1])
				for i := 0; i < len(fs); i++ {
					switch fs[i] {
					case "-o":
						i++
						if n, err := strconv.Atoi(fs[i]); err == nil {
							owner = n
						} else if n, ok := st.users[fs[i]]; ok {
							owner = n
						}
					case "-g", "-m":
						i++
					default:
						dirs = append(dirs, fs[i])
					}
				}
				for _, d := range dirs {
					st.dirs[path.Clean(d)] = owner
				}
			}
			for _, m := range chownCmd.FindAllStringSubmatch(rest, -1) {
				n, _ := strconv.Atoi(m[1])
				for _, d := range strings.Fields(m[2]) {
					if _, ok := st.dirs[path.Clean(d)]; ok {
						st.dirs[path.Clean(d)] = n
					}
				}
			}
		case "COPY":
			from, owner := "", -1
			var paths []string
			for _, a := range strings.Fields(rest) {
				switch {
				case strings.HasPrefix(a, "--from="):
					from = strings.TrimPrefix(a, "--from=")
				case strings.HasPrefix(a, "--chown="):
					u, _, _ := strings.Cut(strings.TrimPrefix(a, "--chown="), ":")
					n, err := strconv.Atoi(u)
					if err != nil {
						return nil, fmt.Errorf("%s: COPY --chown=%s: use a numeric uid", file, u)
					}
					owner = n
				case strings.HasPrefix(a, "--"):
				default:
					paths = append(paths, a)
				}
			}
			if from == "" || len(paths) != 2 {
				continue
			}
			if owner < 0 {
				owner = 0 // COPY makes root's files unless --chown says otherwise
			}
			var src *stage
			for _, s := range stages {
				if s.name == from {
					src = s
				}
			}
			if src == nil {
				continue
			}
			// A folder's content is copied into dest: the folders made
			// below it in the source stage appear below dest.
			srcDir, dest := path.Clean(paths[0]), path.Clean(paths[1])
			for d := range src.dirs {
				if rel, ok := strings.CutPrefix(d, srcDir+"/"); ok && strings.HasSuffix(paths[0], "/") {
					st.dirs[path.Join(dest, rel)] = owner
				}
			}
		}
	}
	if len(stages) == 0 {
		return nil, fmt.Errorf("%s: no FROM", file)
	}
	last := stages[len(stages)-1]
	return &image{File: file, Base: last.base, User: last.user, Env: last.env, Ports: last.ports, Dirs: last.dirs, Entry: last.entry}, nil
}

func expandArgs(s string, args map[string]string) string {
	return regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`).ReplaceAllStringFunc(s, func(m string) string {
		k := strings.Trim(m, "${}")
		return args[k]
	})
}
