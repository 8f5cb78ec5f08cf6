#!/usr/bin/env bash
# Fuzzes the parsers that read outside input with libFuzzer, each for a bounded time:
#   http-request (HTTPRequestParser: what clients send the exporter), http-response
#   (HTTPResponseParser: what probed servers answer), dns (DNSMessage.decodeResponse),
#   netlink (NetlinkDecoder + NetworkModel), config (YAMLParser, ConfigLoader, BlackboxModuleFile: the same YAML as a --modules.file) and history
#   (HistoryRecord.decode), tls-handshake (the web server's TLS context: what a client sends
#   before the handshake, through OpenSSL's SSL_accept over memory, client certificates required
#   and verified, a SAN allow-list; certificates made here with openssl).
#
#   scripts/fuzz.sh [seconds-per-target] [target ...]      (default 20 s, every target)
#
# SwiftPM cannot build fuzz targets, so this compiles fuzz/FuzzTargets.swift with the library's and
# the exporter's sources it needs, as one module (fuzz/sources.txt; when that list no longer compiles, scripts/fuzz-sources
# finds the files again and rewrites it: commit the change; failing that, every source) with
# `swiftc -sanitize=fuzzer,address` (CShim's shim.c with clang, the system OpenSSL linked). One
# binary; RX_FUZZ_TARGET selects the parser; RX_FUZZ_JOBS targets run at a time (default: the
# cores; each fuzzer is one process on one core, so each still has its seconds of a core). Seeds
# come from fuzz/corpus/<target>/ and the regression inputs; new corpus entries go to .build/fuzz/
# only.
# A crash (or a broken output promise, which traps) fails the run and leaves the input in
# .build/fuzz/artifacts/: copy it to fuzz/regressions/<target>/ so FuzzRegressionTests replays it.
# Runs no network code: the parsers get bytes in memory.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
out=.build/fuzz
mkdir -p "$out/cshim" "$out/artifacts"

flags=()
flags+=(-DRX_FUZZ_CONFIG -DRX_FUZZ_HISTORY)

# CShim's module map (SwiftPM writes its own under .build; this one points at the same header).
printf 'module CShim {\n  umbrella header "%s/Sources/CShim/include/CShim.h"\n  export *\n}\n' "$PWD" >"$out/cshim/module.modulemap"
clang -c -O1 -g -fsanitize=fuzzer-no-link,address -I Sources/CShim/include Sources/CShim/shim.c -o "$out/shim.o"
# The exporter's files import ReachabilityVerdict; here both modules are one, so that import
# finds an empty module of the name.
mkdir -p "$out/stub"
[ -f "$out/stub/ReachabilityVerdict.swiftmodule" ] || {
  : >"$out/stub/empty.swift"
  swiftc -emit-module -parse-as-library -module-name ReachabilityVerdict "$out/stub/empty.swift" \
    -o "$out/stub/ReachabilityVerdict.swiftmodule"
}
includes=(-I "$out/stub" -I "$out/cshim" -I Sources/COpenSSL -I Sources/CZlib -I Sources/CCrypt -I Sources/CYAML -I Sources/CPCRE2)
every_source=""  # set when the listed sources would not compile even after finding them again
build() {
  local sources
  if [ -n "$every_source" ]; then
    mapfile -t sources < <(find Sources/ReachabilityVerdict Sources/ReachabilityExporter -name '*.swift' | sort)
  else
    mapfile -t sources < <(grep -v '^#' fuzz/sources.txt)
  fi
  echo "fuzz: compiling ${#sources[@]} of $(find Sources/ReachabilityVerdict Sources/ReachabilityExporter -name '*.swift' | wc -l) sources with -sanitize=fuzzer,address $*"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -module-name Reachability -package-name reachability_exporter \
    "${includes[@]}" "$@" "${sources[@]}" fuzz/FuzzTargets.swift "$out/shim.o" \
    -lssl -lcrypto -lz -lcrypt -lyaml -lpcre2-8 -o "$out/reachability-fuzz"
}
# The list; if the tree moved what the targets need, the list found again; last, every source.
build_listed() {
  build "$@" 2>"$out/compile.log" && return 0
  echo "NOTICE: fuzz: fuzz/sources.txt does not compile against this tree; finding the sources again (commit the new list)"
  grep -m5 error: "$out/compile.log" || true
  if scripts/fuzz-sources --write "${includes[@]}" "$@" >"$out/compile.log" 2>&1; then
    git --no-pager diff --stat -- fuzz/sources.txt 2>/dev/null || true
    build "$@" 2>"$out/compile.log" && return 0
  fi
  echo "NOTICE: fuzz: the sources found do not compile either; compiling every source"
  grep -m5 error: "$out/compile.log" || true
  every_source=1
  build "$@" 2>"$out/compile.log"
}
stamp="${flags[*]:-none}"
if [ -x "$out/reachability-fuzz" ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ] &&
   [ -z "$(find Sources/ReachabilityVerdict Sources/ReachabilityExporter Sources/CShim fuzz/FuzzTargets.swift fuzz/sources.txt -newer "$out/reachability-fuzz" -print -quit)" ]; then
  echo "fuzz: binary up to date"
else
rm -f "$out/stamp"
if ! build_listed "${flags[@]}"; then
  if ((${#flags[@]})); then
    echo "NOTICE: fuzz: the config/history targets do not compile against this tree (${flags[*]}); fuzzing without them"
    grep -m5 error: "$out/compile.log" || true
    flags=()
    build_listed || { cat "$out/compile.log"; exit 1; }
  else
    cat "$out/compile.log"; exit 1
  fi
fi
echo "${flags[*]:-none}" >"$out/stamp"
fi

targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(http-request http-response dns netlink tls-handshake)
  [[ " ${flags[*]:-} " == *RX_FUZZ_CONFIG* ]] && targets+=(config) || echo "NOTICE: fuzz: no config parser in this tree yet; config target skipped"
  [[ " ${flags[*]:-} " == *RX_FUZZ_HISTORY* ]] && targets+=(history) || echo "NOTICE: fuzz: no history decoder in this tree yet; history target skipped"
fi

# The TLS target's server certificate (self-signed; it is its own client CA).
if [ ! -s "$out/tls/server.key" ]; then
  mkdir -p "$out/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$out/tls/server.key" \
    -out "$out/tls/server.pem" -days 3650 -subj /CN=rx-fuzz -addext subjectAltName=DNS:prometheus.example 2>/dev/null
fi
export RX_FUZZ_TLS_DIR="$PWD/$out/tls"

# One target: its row of the table (and the crash's lines) in $out/$t.row, its exit code in $out/$t.rc.
fuzz_one() {
  local t=$1 corpus="$out/corpus/$1" log="$out/$1.log" seeds=() rc runs eps cov ft result
  mkdir -p "$corpus"
  [ -d "fuzz/corpus/$t" ] && seeds+=("fuzz/corpus/$t")
  [ -d "fuzz/regressions/$t" ] && seeds+=("fuzz/regressions/$t")
  set +e
  RX_FUZZ_TARGET=$t ASAN_OPTIONS=detect_leaks=0 "$out/reachability-fuzz" "$corpus" "${seeds[@]}" \
    -max_total_time="$seconds" -max_len=4096 -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$t-" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
  eps=$(awk '/stat::average_exec_per_sec/ { print $2 }' "$log")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{ print $2 }')
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | awk '{ print $2 }')
  result=ok
  if [ "$rc" != 0 ]; then
    # shellcheck disable=SC2012 # the newest artifact: ls -t orders by time, the names are ours
    result="CRASH (exit $rc): $(ls -t "$out"/artifacts/"$t"-* 2>/dev/null | head -1)"
  fi
  {
    printf '%-14s %10s %12s %8s %8s %s\n' "$t" "${runs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$result"
    [ "$rc" = 0 ] || grep -m12 -E 'ERROR|Fatal|panic|#[0-9] ' "$log" || true
  } >"$out/$t.row"
  echo "$rc" >"$out/$t.rc"
}

jobs_at_once=${RX_FUZZ_JOBS:-$(nproc)}
running=()
for t in "${targets[@]}"; do
  rm -f "$out/$t.row" "$out/$t.rc"
  if ((${#running[@]} >= jobs_at_once)); then
    wait "${running[0]}"
    running=("${running[@]:1}")
  fi
  fuzz_one "$t" &
  running+=("$!")
done
wait

failed=0
printf '%-14s %10s %12s %8s %8s %s\n' target runs exec/s cov ft result
for t in "${targets[@]}"; do
  cat "$out/$t.row" 2>/dev/null || echo "$t: no result"
  [ "$(cat "$out/$t.rc" 2>/dev/null)" = 0 ] || failed=1
done
exit $failed
