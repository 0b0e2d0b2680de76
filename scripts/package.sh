#!/usr/bin/env bash
# Makes the packages people download, under dist/:
#   wuzi-windows-x64.zip   pbrain-wuzi.exe, config/ and networks/, as
#                          Piskvork and the Gomocup expect (the brain finds
#                          its files beside itself from any working folder);
#                          at most 8 MB, the Gomocup's limit.
#   wuzi-linux-x64.tar.gz  the same for x86-64 Linux (a static binary).
# Both are the libtorch-free build (native backend; AVX-512, AVX2 or
# portable kernels chosen at run time). Each package holds the networks
# config/wuzi.toml names, stored in f16 (half the bytes; they answer as
# their f32 files within rounding, tests/native.rs), one per rule and
# board side: where it names a rule's fp32 network (the one that plays
# better on CPUs without AVX512-BF16, as the Gomocup's AVX2 EPYCs), the
# package plays that one everywhere; both would not fit in 8 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=$((8 * 1000 * 1000))
rm -rf dist/stage
mkdir -p dist/stage

# The shipped configuration with what differs for a package: the native
# backend, and a rule's fp32 network, where one is named, as its only one.
python3 - config/wuzi.toml dist/stage/wuzi.toml dist/stage/networks.txt <<'PY'
import json, re, sys, tomllib
source = open(sys.argv[1]).read()
network = tomllib.loads(source).get("network", {})
def written(value):
    # A path, or a table of board sides, as TOML (JSON's string escapes
    # are TOML's).
    if isinstance(value, str):
        return json.dumps(value)
    return "{ " + ", ".join("%s = %s" % (side, json.dumps(path)) for side, path in value.items()) + " }"
def files(value):
    return {value} if isinstance(value, str) else set(value.values())
text = re.sub(r'^backend = .*$', 'backend = "native"', source, flags=re.M)
shipped = set()
for rule in ("freestyle", "standard", "renju", "caro"):
    if rule not in network:
        sys.exit("package.sh: config/wuzi.toml names no network.%s" % rule)
    fp32 = network.get(rule + "_fp32", "")
    if fp32 != "":
        text = re.sub(r'^%s = .*$' % rule, lambda _: "%s = %s" % (rule, written(fp32)), text, flags=re.M)
    text = re.sub(r'^%s_fp32 = .*$' % rule, '%s_fp32 = ""' % rule, text, flags=re.M)
    shipped |= files(fp32 if fp32 != "" else network[rule])
# What the package reads must be what was meant: each rule's network as
# chosen above, no fp32 one.
staged = tomllib.loads(text)["network"]
for rule in ("freestyle", "standard", "renju", "caro"):
    wanted = network.get(rule + "_fp32", "") or network[rule]
    if staged[rule] != wanted or staged.get(rule + "_fp32", "") != "":
        sys.exit("package.sh: could not rewrite network.%s in the package's configuration" % rule)
open(sys.argv[2], "w").write(text)
open(sys.argv[3], "w").write("\n".join(sorted(shipped - {""})) + "\n")
PY
networks=$(cat dist/stage/networks.txt)

# The package's networks/README.md: the rows of the project's table that
# describe the networks shipped (the whole file, with every training run,
# is some hundreds of kilobytes about files the package lacks).
networks_readme() { # networks_readme OUT
  python3 - networks/README.md "$1" $networks <<'PY'
import os, sys
source, out, shipped = sys.argv[1], sys.argv[2], {os.path.basename(n) for n in sys.argv[3:]}
lines = open(source).read().splitlines()
header = [l for l in lines[:4] if l.startswith("|")][:2]
rows = [l for l in lines if l.startswith("| `") and l.split("`")[1] in shipped]
missing = shipped - {r.split("`")[1] for r in rows}
if len(header) != 2 or missing:
    what = ", ".join(sorted(missing)) if missing else "its table's header"
    sys.exit("package.sh: networks/README.md has no row for " + what)
with open(out, "w") as f:
    f.write("# The networks of this package\n\n")
    f.write("Which network plays each rule is set in config/wuzi.toml. How each was\n")
    f.write("trained and measured: networks/README.md of the Wuzi source. The files\n")
    f.write("here store the weights in f16, half the bytes of the f32 files the table\n")
    f.write("describes; they answer as those within rounding.\n\n")
    f.write("\n".join(header + rows) + "\n")
PY
}

stage() { # stage DIR BINARY
  local dir=dist/stage/$1
  mkdir -p "$dir/config" "$dir/networks"
  cp "$2" "$dir/"
  cp dist/stage/wuzi.toml "$dir/config/wuzi.toml"
  for n in $networks; do
    "$linux_binary" network "$n" --out "$dir/networks/$(basename "$n")" --storage f16 >/dev/null
  done
  networks_readme "$dir/networks/README.md"
  cp LICENSE "$dir/"
  cp docs/package-readme.txt "$dir/README.txt"
}

# The Linux build first: it also stores the networks in f16 for both.
linux_target=x86_64-unknown-linux-musl
bash scripts/setup-musl.sh >/dev/null
cargo build --profile dist --no-default-features --target $linux_target --bin pbrain-wuzi
linux_binary=target/$linux_target/dist/pbrain-wuzi
stage wuzi-linux-x64 "$linux_binary"

exe=$(bash scripts/build-windows.sh --profile dist | tail -1)
stage wuzi-windows-x64 "$exe"

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
