#!/usr/bin/env bash
# Fuzzing campaign over Cuvil's IR: builds the libFuzzer target cuvil-fuzz
# (tools/cuvil-fuzz; clang with AddressSanitizer, in build-fuzz/) and runs it
# for SECONDS (default 60) on the corpus it keeps in build-fuzz/corpus, seeded
# from the IR tests and transform scripts (scripts/fuzz_seeds.py). Crash
# inputs land in build-fuzz/crashes/; scripts/fuzz_triage.py then groups them
# and the script fails when one crashes in Cuvil's code (crashes inside
# upstream MLIR are listed in fuzz/README.md, and pass).
#
#   bash scripts/fuzz.sh [SECONDS]        CI runs 60; a long campaign: 3600
#   CUVIL_FUZZ_JOBS=N                      parallel fuzzing processes (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
if [ -z "${VIRTUAL_ENV:-}" ] && [ -x .venv/bin/python ]; then . .venv/bin/activate; fi

# clang and its libFuzzer runtime: Debian's clang-14, installed as root when missing.
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$cxx" ] || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, long){return 0;}' \
    | "$cxx" -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -q --no-install-recommends clang-14 libclang-rt-14-dev lld-14 \
        || { apt-get update -q && apt-get install -y -q --no-install-recommends \
               clang-14 libclang-rt-14-dev lld-14; }; } > /tmp/cuvil-fuzz-apt.log 2>&1 \
      || { echo "fuzz: could not install clang-14 (see /tmp/cuvil-fuzz-apt.log)"; exit 1; }
    cxx=$(command -v clang++-14)
  else
    echo "fuzz: needs clang++ with libFuzzer (Debian: clang-14 libclang-rt-14-dev lld-14)"; exit 1
  fi
fi
cc=${cxx/clang++/clang}
site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
linker=()
command -v ld.lld-14 >/dev/null || command -v ld.lld >/dev/null && linker=(-DLLVM_USE_LINKER=lld)
cmake -G Ninja -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "${linker[@]}" \
  -DMLIR_DIR="$site/mlir/lib/cmake/mlir" -DLLVM_DIR="$site/llvm/lib/cmake/llvm" \
  -DCUVIL_ENABLE_PYTHON=OFF -DCUVIL_ENABLE_FUZZER=ON > build-fuzz.configure.log 2>&1 \
  || { cat build-fuzz.configure.log; exit 1; }
rm -f build-fuzz.configure.log
cmake --build build-fuzz -j "${CUVIL_BUILD_JOBS:-2}" --target cuvil-fuzz | tail -1

python scripts/fuzz_seeds.py build-fuzz
# A folder of crash inputs per campaign: triage reruns just this one's.
crashes=build-fuzz/crashes/$(date -u +%Y%m%dT%H%M%S)
mkdir -p build-fuzz/corpus "$crashes"
# Container-overflow checks need every library instrumented (MLIR's are not);
# MLIR keeps uniqued storage for the context's lifetime, which is no leak.
# dedup_token_length lets libFuzzer keep one input per crashing stack.
export ASAN_OPTIONS=detect_container_overflow=0:detect_leaks=0:dedup_token_length=3
start=$(date +%s)
build-fuzz/bin/cuvil-fuzz -fork="${CUVIL_FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 \
  -ignore_ooms=1 -timeout=30 -rss_limit_mb=4096 -max_total_time="$seconds" \
  -artifact_prefix="$crashes/" -dict=build-fuzz/mlir.dict \
  build-fuzz/corpus build-fuzz/seeds > build-fuzz/last-campaign.log 2>&1 || true
grep -E "^#[0-9]+: cov" build-fuzz/last-campaign.log | tail -1 || true
found=$(ls "$crashes" | wc -l)
echo "$(date -u +%FT%TZ) $(( $(date +%s) - start ))s corpus=$(ls build-fuzz/corpus | wc -l)" \
  "crash_inputs=$found $crashes" >> build-fuzz/campaigns.log
tail -1 build-fuzz/campaigns.log
[ "$found" -eq 0 ] || python scripts/fuzz_triage.py build-fuzz/bin/cuvil-fuzz "$crashes" --json "$crashes.triage.json"
