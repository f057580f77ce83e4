# Sourced by bin/tally-hook when bash runs it: the recorder request through bash's own /dev/tcp,
# so a hook costs one bash and no other process (no cat, no curl). Defines tcp_payload (reads the
# hook payload) and tcp_post (sends it, sets `answer`); either failing sends the caller to the Node
# shim. Not a program of its own, and never read by a shell other than bash.

# The most a payload may be (the recorder's own limit on a body); one this long or longer is left
# to the Node shim, the rest of it still unread on stdin.
TCP_MAX=16777216

# The payload, byte for byte, read by bash itself: `read -N` reads in large pieces even from a
# pipe or a socket (agents give a hook a socket as stdin, which /dev/stdin cannot open), where
# `read -d ''` would take a byte per system call. Counted in bytes whatever the locale.
tcp_payload() {
  local LC_ALL=C
  IFS= read -r -N "$TCP_MAX" payload
  # 1 is the end of input, the normal end; above it, read failed: the Node shim takes over.
  [ $? -le 1 ] && [ "${#payload}" -lt "$TCP_MAX" ]
}

# Bytes, not characters, whatever the locale: HTTP counts bytes.
tcp_bytes() {
  local LC_ALL=C
  bytes=${#1}
}

# POST the payload to the recorder; on a whole 200 answer sets `answer` to its body and returns 0.
# Anything else (no connection, a write that fails, a timeout, a status other than 200, a body
# shorter than its Content-Length, a chunked body) returns 1 and leaves the retry to the Node shim.
tcp_post() {
  local path=$1 response status headers body length line
  # Only what cannot break the request line or a header goes into them.
  case $path in *[!A-Za-z0-9/?=._-]*) return 1 ;; esac
  local session=
  case ${TALLY_SESSION-} in
    ses_*) case ${TALLY_SESSION#ses_} in ''|*[!A-Za-z0-9_]*) ;; *) session=$TALLY_SESSION ;; esac ;;
  esac
  tcp_bytes "$payload
"
  local request="POST $path HTTP/1.1"$'\r\n'"host: 127.0.0.1:$port"$'\r\n'"authorization: Bearer $secret"$'\r\n'"content-type: application/json"$'\r\n'"content-length: $bytes"$'\r\n'"connection: close"$'\r\n'
  [ -n "$session" ] && request+="x-tally-session: $session"$'\r\n'
  [ -n "$id" ] && request+="x-tally-event-id: $id"$'\r\n'
  # A recorder that closes early makes the write fail, never kills this shell.
  trap '' PIPE
  { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || return 1
  printf '%s' "$request"$'\r\n' "$payload" $'\n' >&3 2>/dev/null || { exec 3>&-; return 1; }
  # The whole answer, to the recorder's close (`connection: close`), within the curl path's limit.
  IFS= read -r -d '' -t 600 response <&3
  status=$?
  exec 3>&-
  # read returns 1 at the end of input (the normal end here); above 128 is the timeout.
  [ "$status" -le 1 ] || return 1
  line=${response%%$'\r\n'*}
  # 200 alone, as the Node shim takes it: any other status is the Node shim's to handle.
  case $line in 'HTTP/1.'[01]' 200 '*|'HTTP/1.'[01]' 200') ;; *) return 1 ;; esac
  case $response in *$'\r\n\r\n'*) ;; *) return 1 ;; esac
  headers=${response%%$'\r\n\r\n'*}
  body=${response#*$'\r\n\r\n'}
  length=
  while IFS= read -r line; do
    line=${line%$'\r'}
    case $line in
      [Cc]ontent-[Ll]ength:*) length=${line#*:}; length=${length//[!0-9]/} ;;
      [Tt]ransfer-[Ee]ncoding:*) return 1 ;;
    esac
  done <<<"$headers"
  tcp_bytes "$body"
  [ -n "$length" ] && [ "$length" -eq "$bytes" ] || return 1
  answer=$body
}

# The last word of this file: sourcing it fails on a bash older than 4.1 (no `read -N`, as the
# /bin/bash of some systems), and the script then goes the sh and curl way.
[ "${BASH_VERSINFO[0]}" -gt 4 ] || { [ "${BASH_VERSINFO[0]}" -eq 4 ] && [ "${BASH_VERSINFO[1]}" -ge 1 ]; }
