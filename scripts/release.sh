#!/usr/bin/env bash
# The release, written into OUTDIR:
#   strata_VERSION_OS_ARCH.tar.gz  linux amd64/arm64, darwin amd64/arm64
#   strata_VERSION_windows_amd64.zip
#     each a folder holding the binary, LICENSE, README.md and COMMIT (the
#     full commit, as `git rev-parse HEAD` prints it)
#   strata_VERSION_ARCH.deb        linux amd64/arm64 (nfpm, packaging/nfpm.yaml):
#     /usr/lib/strata/strata with its COMMIT beside it, /usr/bin/strata a link
#   strata_VERSION_sbom.cdx.json   a CycloneDX SBOM of the Go modules in the
#     binary (cyclonedx-gomod)
#   SHA256SUMS                     over every other file
#
# Reproducible: -trimpath, no build ID, every file time the commit's date,
# archives without owners and in name order, gzip without a name or time,
# the SBOM without serial number or timestamp. Two builds of one commit are
# byte-identical (internal/releasetest builds twice and compares).
#
# nfpm and cyclonedx-gomod are built from tools/release/go.mod, their own
# module, so none of their dependencies enter strata's go.mod, and go.sum
# holds every one to its hash; they are built into a temporary folder (the
# Go build cache makes a second build quick) and removed afterwards. (Not
# goreleaser: built from source it costs several times these two, for the
# same files.)
#
# Usage: scripts/release.sh [--snapshot] [--only OS/ARCH] OUTDIR
#   --snapshot      HEAD as it is, versioned 0.0.0-snapshot-SHORTCOMMIT;
#                   without it HEAD must be clean and tagged vX.Y.Z
#   --only OS/ARCH  one platform, e.g. linux/amd64 (CI builds only that one)
# OUTDIR must be new or empty.
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/release.sh [--snapshot] [--only OS/ARCH] OUTDIR" >&2
  exit 2
}
snapshot=false
only=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --snapshot) snapshot=true ;;
    --only)
      [ $# -ge 2 ] || usage
      only="$2"
      shift
      ;;
    --only=*) only="${1#--only=}" ;;
    -*)
      echo "scripts/release.sh: unknown flag $1" >&2
      usage
      ;;
    *)
      [ -z "$out" ] || usage
      out="$1"
      ;;
  esac
  shift
done
[ -n "$out" ] || usage
case "$out" in /*) ;; *) out="$here/$out" ;; esac
targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64)
if [ -n "$only" ]; then
  if ! [[ " ${targets[*]} " == *" $only "* ]]; then
    echo "scripts/release.sh: --only takes one of ${targets[*]}, not \"$only\"" >&2
    exit 2
  fi
  targets=("$only")
fi
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "scripts/release.sh: $out is not empty; the release goes into a new or empty folder" >&2
  exit 2
fi

commit=$(git rev-parse HEAD)
if $snapshot; then
  version="0.0.0-snapshot-${commit:0:12}"
else
  if [ -n "$(git status --porcelain)" ]; then
    echo "scripts/release.sh: the work tree has changes; a release is built from a clean, tagged HEAD (or use --snapshot)" >&2
    exit 1
  fi
  tag=$(git describe --exact-match --tags --match 'v[0-9]*' HEAD 2>/dev/null) || {
    echo "scripts/release.sh: HEAD has no vX.Y.Z tag; tag it, or use --snapshot" >&2
    exit 1
  }
  version="${tag#v}"
fi
# Every time in the release is the commit's date.
export SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct HEAD)
export TZ=UTC

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -trimpath -modfile=tools/release/go.mod -o "$tmp/bin/nfpm" github.com/goreleaser/nfpm/v2/cmd/nfpm
go build -trimpath -modfile=tools/release/go.mod -o "$tmp/bin/cyclonedx-gomod" github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod

mkdir -p "$tmp/out"
for target in "${targets[@]}"; do
  goos=${target%/*}
  goarch=${target#*/}
  name="strata_${version}_${goos}_${goarch}"
  stage="$tmp/stage/$name"
  mkdir -p "$stage"
  exe=strata
  [ "$goos" = windows ] && exe=strata.exe
  # -buildvcs=true: the binary carries its own commit even where GOFLAGS
  # turns stamping off (this project's machines do).
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=true \
    -ldflags "-s -w -buildid= -X github.com/strata-bench/strata/internal/version.Version=$version" \
    -o "$stage/$exe" ./cmd/strata
  cp LICENSE README.md "$stage/"
  echo "$commit" >"$stage/COMMIT"
  chmod 0755 "$stage" "$stage/$exe"
  chmod 0644 "$stage/LICENSE" "$stage/README.md" "$stage/COMMIT"
  touch -h -d "@$SOURCE_DATE_EPOCH" "$stage" "$stage"/*
  (
    cd "$tmp/stage"
    if [ "$goos" = windows ]; then
      # -X: no extra fields (owners, access times); names in order.
      zip -q -X -D "$tmp/out/$name.zip" "$name/$exe" "$name/COMMIT" "$name/LICENSE" "$name/README.md"
    else
      tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner --format=ustar -cf - "$name" |
        gzip -n -9 >"$tmp/out/$name.tar.gz"
    fi
  )
  if [ "$goos" = linux ]; then
    STRATA_ARCH=$goarch STRATA_VERSION=$version STRATA_STAGE=$stage \
      "$tmp/bin/nfpm" package --config packaging/nfpm.yaml --packager deb --target "$tmp/out/strata_${version}_${goarch}.deb"
  fi
done

# The SBOM of the modules in the binary, read from the first target's build
# information (the targets differ only in the standard library's platform
# files). Not `cyclonedx-gomod app`: it reads the checkout with go-git,
# which cannot open a linked worktree.
first=${targets[0]}
first="$tmp/stage/strata_${version}_${first%/*}_${first#*/}/strata"
[ -e "$first" ] || first="$first.exe"
"$tmp/bin/cyclonedx-gomod" bin -json -noserial -notimestamp -version "$version" \
  -output "$tmp/out/strata_${version}_sbom.cdx.json" "$first"

(cd "$tmp/out" && LC_ALL=C sha256sum -- * >SHA256SUMS)
mkdir -p "$out"
cp "$tmp/out"/* "$out/"
echo "release $version of $commit in $out:"
(cd "$out" && ls -1)
