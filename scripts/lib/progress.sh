# Sourced by scripts/run.sh and scripts/build-jaeger.sh: a `go build` with
# progress on stderr.
#
#   progress_go_build LABEL [go build flags and packages...]
#
# runs `go build -v …` (in the current folder) and returns its exit status.
# `go build -v` names each package as it compiles it (none that the build
# cache already has); the count, the elapsed time and the package being
# compiled are shown on one line rewritten in place when stderr is a
# terminal, else (or with C2_PROGRESS=lines) as a line every 30 s. Anything
# else the build prints (errors, "go: downloading …") goes to stderr as it
# comes.
#
# No process runs in the background: the loop reads the build's output
# until it ends, so the function returns the moment the build does.

progress_go_build() {
  local label=$1
  shift
  local tty=0
  if [ -t 2 ] && [ "${C2_PROGRESS:-}" != lines ]; then tty=1; fi
  { go build -v "$@" 2>&1; echo "progress_go_build: exit $?"; } | _progress_reader "$label" "$tty"
}

_progress_reader() {
  local label=$1 tty=$2
  local start=$SECONDS n=0 cur="" line="" partial="" rc=1 next=30 got
  while :; do
    line=""
    if IFS= read -r -t 1 line; then
      got=line
    else
      if [ $? -gt 128 ]; then got=timeout; else got=eof; fi
    fi
    if [ "$got" = timeout ]; then
      partial+=$line # a line cut by the timeout: the rest comes next
    else
      line=$partial$line
      partial=""
      if [ "$got" = eof ] && [ -z "$line" ]; then break; fi
      case $line in
      "progress_go_build: exit "*) rc=${line#progress_go_build: exit } ;;
      *[[:space:]:]* | "#"* | "") # not an import path: the build says something
        if [ "$tty" = 1 ]; then printf '\r\033[K' >&2; fi
        printf '%s\n' "$line" >&2
        ;;
      *) n=$((n + 1)); cur=$line ;;
      esac
      if [ "$got" = eof ]; then break; fi
    fi
    local el=$((SECONDS - start))
    if [ "$tty" = 1 ]; then
      local show=$cur
      if [ ${#show} -gt 48 ]; then show="…${show: -47}"; fi
      printf '\r\033[K%s: %ds, %d packages compiled %s' "$label" "$el" "$n" "$show" >&2
    elif [ "$el" -ge "$next" ]; then
      printf '%s: still compiling (%ds, %d packages)\n' "$label" "$el" "$n" >&2
      next=$((el + 30))
    fi
  done
  if [ "$tty" = 1 ]; then printf '\r\033[K' >&2; fi
  return "$rc"
}
