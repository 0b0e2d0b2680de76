#!/usr/bin/env bash
# Makes the packages people download, under dist/:
#   wuzi-windows-x64.zip   pbrain-wuzi.exe, config/ and networks/, as
#                          Piskvork and the Gomocup expect (the brain finds
#                          its files beside itself from any working folder);
#                          at most 8 MB, the Gomocup's limit.
#   wuzi-linux-x64.tar.gz  the same for x86-64 Linux (a static binary).
# Both are the libtorch-free build (native backend; AVX-512, AVX2 or
# portable kernels chosen at run time). The fallback networks for libtorch
# (*-4x32) are left out: the native backend does not use them.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=$((8 * 1000 * 1000))
rm -rf dist/stage
mkdir -p dist/stage

# The shipped configuration with what differs for a package: the native
# backend and no fallback networks.
package_config() {
  sed -e 's/^backend = .*/backend = "native"/' \
      -e 's/^\(freestyle_fp32\|standard_fp32\|renju_fp32\|caro_fp32\) = .*/\1 = ""/' \
      config/wuzi.toml
}
networks=$(sed -n 's/^\(freestyle\|standard\|renju\|caro\) = "\(.\+\)"$/\2/p' config/wuzi.toml | sort -u)

stage() { # stage DIR BINARY
  local dir=dist/stage/$1
  mkdir -p "$dir/config" "$dir/networks"
  cp "$2" "$dir/"
  package_config >"$dir/config/wuzi.toml"
  for n in $networks; do cp "$n" "$dir/networks/"; done
  cp networks/README.md "$dir/networks/"
  cp LICENSE "$dir/"
  cp docs/package-readme.txt "$dir/README.txt"
}

exe=$(bash scripts/build-windows.sh --profile dist | tail -1)
stage wuzi-windows-x64 "$exe"

linux_target=x86_64-unknown-linux-musl
bash scripts/setup-musl.sh >/dev/null
cargo build --profile dist --no-default-features --target $linux_target --bin pbrain-wuzi
stage wuzi-linux-x64 "target/$linux_target/dist/pbrain-wuzi"

rm -f dist/wuzi-windows-x64.zip dist/wuzi-linux-x64.tar.gz
python3 - <<'PY'
import os, zipfile
root = "dist/stage/wuzi-windows-x64"
with zipfile.ZipFile("dist/wuzi-windows-x64.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for folder, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            path = os.path.join(folder, f)
            z.write(path, os.path.relpath(path, root))
PY
tar -C dist/stage -czf dist/wuzi-linux-x64.tar.gz wuzi-linux-x64
for f in dist/wuzi-windows-x64.zip dist/wuzi-linux-x64.tar.gz; do
  size=$(stat -c %s "$f")
  echo "$f: $size bytes"
  if [ "$size" -gt "$LIMIT" ]; then
    echo "package.sh: $f is over the Gomocup's 8 MB" >&2
    exit 1
  fi
done
