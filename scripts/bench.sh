#!/usr/bin/env bash
# Side-by-side benchmark on a real package (default: the v5.0 NVIDIA
# package of the corpus, 241 logs, 24 MiB):
#   1. the official package_checker vs `mlaudit check`: wall time, ratio,
#      peak RSS (on a copy in a temporary folder: the official tool rewrites
#      scaling.json inside the tree);
#   2. `mlaudit log` throughput over the package's result logs vs a plain
#      line scan (`cat | wc -l`) of the same bytes;
#   3. `mlaudit check` on a package with many implementation configs (v5.1
#      GigaComputing, about 1,000 config files) with and without its
#      `benchmarks/` folder: what configuration scanning costs, scanning
#      every config (--no-cache) and with their findings kept from an
#      earlier run (in a private cache folder), beside what listing the
#      folder alone costs (`find`), what reading every file once costs
#      (`find | xargs cat`) and what the package walk alone costs
#      (the same copies in the open division, whose configs are not
#      scanned): the floor of any run.
# Prints figures only; nothing here is asserted.
#
# Environment: MLAUDIT_CORPUS (default ../shared/corpus beside the checkout),
# BENCH_ROUND (v5.0), BENCH_ORG (NVIDIA), BENCH_RULESET (5.0.0),
# MLPERF_PYTHON (/opt/mlperf-venv/bin/python, else /work/venv-mlperf/bin/python),
# BENCH_RUNS (3; best run kept), BENCH_CONFIG_ROUND (v5.1),
# BENCH_CONFIG_ORG (GigaComputing), BENCH_CONFIG_RULESET (5.1.0),
# BENCH_CONFIG_REPS (20: runs per configuration-scanning figure).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
corpus=${MLAUDIT_CORPUS:-$repo/../shared/corpus}
round=${BENCH_ROUND:-v5.0}
org=${BENCH_ORG:-NVIDIA}
ruleset=${BENCH_RULESET:-5.0.0}
py=${MLPERF_PYTHON:-/opt/mlperf-venv/bin/python}
[ -x "$py" ] || py=/work/venv-mlperf/bin/python
runs=${BENCH_RUNS:-3}
src="$corpus/$round/$org"

if [ ! -d "$src" ]; then
  echo "bench: no package at $src (set MLAUDIT_CORPUS)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench: /usr/bin/time (GNU time) is needed for peak memory" >&2
  exit 2
fi

echo "building target/release/mlaudit ..." >&2
(cd "$repo" && cargo build --release --quiet)
mlaudit="$repo/target/release/mlaudit"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# mlaudit keeps config findings between runs: here, in the temporary folder.
export MLAUDIT_CACHE_DIR="$tmp/cache"
cp -r "$src" "$tmp/$org"

calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }

# best_of CMD...: runs CMD $runs times; prints "seconds peak_kb cpu_seconds"
# of the fastest run (output of CMD discarded; its exit status ignored).
# CPU time (user + system) is printed too: on a loaded machine it is the
# steadier figure.
best_of() {
  local best="" line
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$tmp/.t" -f '%e %M %U %S' "$@" >/dev/null 2>&1 || true
    line=$(tail -1 "$tmp/.t" | awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }')
    if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
      best=$line
    fi
  done
  echo "$best"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "package: $round/$org ($(find "$tmp/$org" -name 'result_*.txt' | wc -l) result logs), ruleset $ruleset, best of $runs runs"
echo

# 1. Whole package.
# Every config scanned every run, as the official tool does.
read -r m_s m_kb m_cpu < <(cd "$tmp" && best_of "$mlaudit" check --no-cache --ruleset "$ruleset" "$org")
if [ -x "$py" ] && "$py" -c 'import mlperf_logging' 2>/dev/null; then
  # The official tool is slow: one run is enough for its figure.
  (cd "$tmp" && /usr/bin/time -o "$tmp/.o" -f '%e %M %U %S' "$py" -m mlperf_logging.package_checker "$org" training "$ruleset" >"$tmp/official.log" 2>&1) || true
  read -r o_s o_kb o_cpu < <(tail -1 "$tmp/.o" | awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }')
  printf '%-34s %8s s wall %6s s CPU %8.1f MB peak\n' "official package_checker" "$o_s" "$o_cpu" "$(calc "$o_kb / 1024")"
  printf '%-34s %8s s wall %6s s CPU %8.1f MB peak\n' "mlaudit check" "$m_s" "$m_cpu" "$(calc "$m_kb / 1024")"
  printf '%-34s %8.0fx faster (wall), %.0fx less CPU, %.1fx less memory\n' "ratio" \
    "$(calc "$o_s / ($m_s + 0.005)")" "$(calc "$o_cpu / ($m_cpu + 0.005)")" "$(calc "$o_kb / $m_kb")"
else
  echo "official package_checker: skipped ($py with mlperf_logging not found;"
  echo "  install: python3 -m venv /opt/mlperf-venv && /opt/mlperf-venv/bin/pip install mlperf-logging==4.1.68)"
  printf '%-34s %8s s wall %6s s CPU %8.1f MB peak\n' "mlaudit check" "$m_s" "$m_cpu" "$(calc "$m_kb / 1024")"
fi
echo

# 2. Log throughput against a plain line scan of the same bytes.
find "$tmp/$org" -name 'result_*.txt' | sort >"$tmp/.logs"
bytes=$(xargs cat <"$tmp/.logs" | wc -c)
mb=$(calc "$bytes / 1048576")
read -r l_s l_kb l_cpu < <(best_of sh -c "xargs '$mlaudit' log --ruleset '$ruleset' <'$tmp/.logs'")
read -r w_s _ w_cpu < <(best_of sh -c "xargs cat <'$tmp/.logs' | wc -l")
rate() { calc "$mb / ($1 + 0.005)"; }
printf '%-34s %8s s wall %6s s CPU %6.0f MB/s  (%.1f MiB)\n' "mlaudit log (all result logs)" "$l_s" "$l_cpu" "$(rate "$l_s")" "$mb"
printf '%-34s %8s s wall %6s s CPU %6.0f MB/s\n' "line scan (cat | wc -l)" "$w_s" "$w_cpu" "$(rate "$w_s")"
printf '%-34s %8.1fx the line scan time, %.1f MB peak\n' "mlaudit log" \
  "$(calc "($l_s + 0.005) / ($w_s + 0.005)")" "$(calc "$l_kb / 1024")"

echo

# 3. Configuration scanning: the same package with and without benchmarks/.
cfg_round=${BENCH_CONFIG_ROUND:-v5.1}
cfg_org=${BENCH_CONFIG_ORG:-GigaComputing}
cfg_ruleset=${BENCH_CONFIG_RULESET:-5.1.0}
cfg_src="$corpus/$cfg_round/$cfg_org"
if [ -d "$cfg_src/benchmarks" ]; then
  mkdir -p "$tmp/with" "$tmp/without"
  cp -r "$cfg_src" "$tmp/with/$cfg_org"
  cp -r "$cfg_src" "$tmp/without/$cfg_org"
  rm -rf "$tmp/without/$cfg_org/benchmarks"
  n_cfg=$(find "$tmp/with/$cfg_org/benchmarks" -type f | wc -l)
  # Every config scanned (--no-cache), then with the configs' findings
  # kept from an earlier run (a private cache folder; the copies settle
  # first: a config changed within a moment of a scan is not kept).
  sleep 2.5
  (cd "$tmp/with" && "$mlaudit" check --ruleset "$cfg_ruleset" "$cfg_org" >/dev/null 2>&1) || true
  # A check here takes a few tens of milliseconds, under the 10 ms
  # resolution of `time`: each figure is the mean of $cfg_reps runs timed
  # together (the loop's own cost is the same for all three).
  cfg_reps=${BENCH_CONFIG_REPS:-20}
  per_run() {
    local dir=$1
    shift
    (cd "$dir" && best_of sh -c 'i=0; while [ $i -lt '"$cfg_reps"' ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done' sh "$@") |
      awk -v n="$cfg_reps" '{ printf "%.4f %s %.4f\n", $1 / n, $2, $3 / n }'
  }
  read -r c_s _ c_cpu < <(per_run "$tmp/with" "$mlaudit" check --no-cache --ruleset "$cfg_ruleset" "$cfg_org")
  read -r k_s _ k_cpu < <(per_run "$tmp/with" "$mlaudit" check --ruleset "$cfg_ruleset" "$cfg_org")
  read -r n_s _ n_cpu < <(per_run "$tmp/without" "$mlaudit" check --no-cache --ruleset "$cfg_ruleset" "$cfg_org")
  # The floor no config scanner can go below: listing benchmarks/ and the
  # size of every file in it (what the repository checks need anyway).
  read -r f_s _ f_cpu < <(per_run "$tmp/with" find "$cfg_org/benchmarks" -printf '%s\n')
  # ... and reading every file's bytes once (what a first run must do to
  # know what is in them; `cat` run by xargs, a couple of processes).
  read -r r_s _ r_cpu < <(per_run "$tmp/with" sh -c "find '$cfg_org/benchmarks' -type f -print0 | xargs -0 cat")
  # The package walk alone: the same two copies with every system in the
  # open division, whose configs are not scanned. What the one with
  # benchmarks/ costs more is listing it (a stat per file, which the
  # repository checks need), discovery and the repository checks: a part
  # of any run, first or kept, that no scanner can save.
  for d in with without; do
    mkdir -p "$tmp/open-$d"
    cp -r "$tmp/$d/$cfg_org" "$tmp/open-$d/$cfg_org"
    for j in "$tmp/open-$d/$cfg_org"/systems/*.json; do
      sed -i 's/"division": *"closed"/"division": "open"/' "$j"
    done
  done
  read -r ow_s _ ow_cpu < <(per_run "$tmp/open-with" "$mlaudit" check --no-cache --ruleset "$cfg_ruleset" "$cfg_org")
  read -r on_s _ on_cpu < <(per_run "$tmp/open-without" "$mlaudit" check --no-cache --ruleset "$cfg_ruleset" "$cfg_org")
  printf '%-34s %8s s wall %6s s CPU  (%d config files; mean of %d runs)\n' "check $cfg_round/$cfg_org" "$c_s" "$c_cpu" "$n_cfg" "$cfg_reps"
  printf '%-34s %8s s wall %6s s CPU\n' "  configs unchanged (kept)" "$k_s" "$k_cpu"
  printf '%-34s %8s s wall %6s s CPU\n' "  without benchmarks/" "$n_s" "$n_cpu"
  printf '%-34s %8s s wall %6s s CPU  (find: the folders and sizes alone)\n' "  listing benchmarks/" "$f_s" "$f_cpu"
  printf '%-34s %8s s wall %6s s CPU  (find | xargs cat: every byte read once)\n' "  reading benchmarks/" "$r_s" "$r_cpu"
  printf '%-34s %8s s wall %6s s CPU  (open division: no config scanned)\n' "  walk only, with benchmarks/" "$ow_s" "$ow_cpu"
  printf '%-34s %8s s wall %6s s CPU\n' "  walk only, without benchmarks/" "$on_s" "$on_cpu"
  printf '%-34s %7.0f%% of the CPU time (%.0f%% of the wall time)\n' "  configuration scanning, first run" \
    "$(calc "100 * ($c_cpu - $n_cpu) / $c_cpu")" "$(calc "100 * ($c_s - $n_s) / $c_s")"
  printf '%-34s %7.0f%% of the CPU time (%.0f%% of the wall time)\n' "  ... configs kept (a run again)" \
    "$(calc "100 * ($k_cpu - $n_cpu) / $k_cpu")" "$(calc "100 * ($k_s - $n_s) / $k_s")"
  printf '%-34s %7.0f%% of the CPU time (%.0f%% of the wall time)\n' "  ... walking benchmarks/ alone" \
    "$(calc "100 * ($ow_cpu - $on_cpu) / $ow_cpu")" "$(calc "100 * ($ow_s - $on_s) / $ow_s")"
  printf '%-34s %7.0f%% of the CPU time\n' "  ... the listing alone (find)" \
    "$(calc "100 * $f_cpu / $c_cpu")"
  printf '%-34s %7.0f%% of the CPU time\n' "  ... reading every file (cat)" \
    "$(calc "100 * $r_cpu / $c_cpu")"
else
  echo "configuration scanning: skipped (no $cfg_src/benchmarks)"
fi
