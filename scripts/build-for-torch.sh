#!/usr/bin/env bash
# Builds pbrain-wuzi against another torch version's libtorch, for a machine
# whose own PyTorch is that version (the device tool's GPU machines have
# torch 2.11 and no Rust; the project's torch 2.13 is too large to carry).
# The binary then loads that machine's libtorch through LD_LIBRARY_PATH
# (scripts/gpu-selfplay.sh sets it).
#
# tch 0.26's C++ wrapper is generated for torch 2.13: the functions it wraps
# that the older libtorch lacks fail to compile. They are replaced by stubs
# that throw (the engine uses none of them), in a copy of torch-sys, and
# the build uses that copy through a command-line [patch]; the repository
# (Cargo.toml, Cargo.lock) is not changed.
#
# Usage: scripts/build-for-torch.sh VERSION [OUT_DIR]
#   e.g. scripts/build-for-torch.sh 2.11.0 .devbin
# Leaves OUT_DIR/pbrain-wuzi (stripped) and OUT_DIR/config; the work folder
# is $WORK (default /tmp/wuzi-torch-VERSION): the wheel's libtorch, the
# patched torch-sys, a copy of the sources and the target folder.
set -euo pipefail
version=${1:?usage: scripts/build-for-torch.sh VERSION [OUT_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$root/.devbin}
work=${WORK:-/tmp/wuzi-torch-$version}
py=${PYTHON:-$root/.venv/bin/python}
mkdir -p "$work"

if [[ ! -f $work/torch/lib/libtorch_cpu.so ]]; then
  "$py" -m pip download --no-deps --only-binary=:all: "torch==$version" -d "$work/wheel"
  (cd "$work" && unzip -q -o wheel/torch-*.whl 'torch/include/*' 'torch/lib/*' 'torch/share/*' 'torch/version.py')
  rm -rf "$work/wheel"
fi

registry_copy=$(ls -d "$HOME"/.cargo/registry/src/*/torch-sys-0.26.0 | head -n 1)
[[ -d $work/torch-sys ]] || cp -r "$registry_copy" "$work/torch-sys"

# The sources without build outputs, so that the project's target/ is not
# rebuilt for the other libtorch.
rm -rf "$work/src" && mkdir -p "$work/src"
(cd "$root" && tar --exclude=./target --exclude=./.venv --exclude=./.git --exclude=./runs \
  --exclude=./.gpujob --exclude=./.devbin -cf - .) | tar -xf - -C "$work/src"

build() {
  (cd "$work/src" && LIBTORCH="$work/torch" LIBTORCH_BYPASS_VERSION_CHECK=1 \
    cargo build --release --bin pbrain-wuzi --target-dir "$work/target" \
    --config "patch.crates-io.torch-sys.path=\"$work/torch-sys\"") >"$work/build.log" 2>&1
}

# Stubs the wrapper functions named by the compiler's errors.
stub_missing() {
  local lines
  lines=$(grep -o 'torch_api_generated.cpp:[0-9]*:[0-9]*: error' "$work/build.log" | cut -d: -f2 | sort -un)
  [[ -n $lines ]] || return 1
  python3 - "$work/torch-sys/libtch/torch_api_generated.cpp" $lines <<'EOF'
import sys
path, bad = sys.argv[1], [int(n) for n in sys.argv[2:]]
lines = open(path).read().split("\n")
spans = set()
for n in bad:
    start = n - 1
    while not lines[start].startswith(("void atg_", "tensor atg_", "int64_t atg_")):
        start -= 1
    end = n - 1
    while lines[end] != "}":
        end += 1
    spans.add((start, end))
for start, end in sorted(spans, reverse=True):
    body = ['  PROTECT(throw std::runtime_error("not in this libtorch");)']
    if not lines[start].startswith("void"):
        body.append("  return 0;")
    lines[start + 1:end] = body
open(path, "w").write("\n".join(lines))
print(f"build-for-torch: stubbed {len(spans)} wrapper functions")
EOF
}

for attempt in 1 2 3; do
  if build; then
    mkdir -p "$out"
    strip -o "$out/pbrain-wuzi" "$work/target/release/pbrain-wuzi"
    rm -rf "$out/config" && cp -r "$root/config" "$out/config"
    echo "build-for-torch: $out/pbrain-wuzi for torch $version"
    exit 0
  fi
  stub_missing || break
done
tail -n 30 "$work/build.log" >&2
echo "build-for-torch: the build failed (log: $work/build.log)" >&2
exit 1
