#!/usr/bin/env bash
# Installs the ONNX Runtime shared library that `--embedder onnx://` loads
# (github.com/yalue/onnxruntime_go drives it through cgo). The library comes
# from the npm registry: the onnxruntime-node package ships it for linux-x64.
#
#   tools/install-onnxruntime.sh [DEST_DIR]
#
# DEST_DIR defaults to $HOME/.local/lib/locus, where locus looks for it;
# elsewhere, point LOCUS_ONNXRUNTIME_LIB (or the embedder URL's lib=) at the
# file. The package's checksum and the library's are verified.
set -euo pipefail
version=1.24.3
pkg_sha256=aa1bb5fa261ea68de05dd53efbba210cd7adf2d2850f4c3a201054c74cc78040
lib_sha256=92ba8e44d31b80a34f5e805076a044122c3be1fffe0d88ed790de7267b0b2682
dest=${1:-$HOME/.local/lib/locus}
lib=$dest/libonnxruntime.so.1

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) ;;
  *) echo "install-onnxruntime: only linux x86_64 is packaged here; install ONNX Runtime $version yourself and set LOCUS_ONNXRUNTIME_LIB" >&2; exit 1 ;;
esac
if [ -f "$lib" ] && echo "$lib_sha256  $lib" | sha256sum -c --status; then
  echo "ONNX Runtime $version already at $lib"
  exit 0
fi
command -v npm >/dev/null || { echo "install-onnxruntime: npm is needed (Debian package npm)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "onnxruntime-node@$version" >/dev/null)
echo "$pkg_sha256  $work/onnxruntime-node-$version.tgz" | sha256sum -c --status ||
  { echo "install-onnxruntime: onnxruntime-node-$version.tgz does not have the expected SHA-256" >&2; exit 1; }
tar -xzf "$work/onnxruntime-node-$version.tgz" -C "$work" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
echo "$lib_sha256  $work/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" | sha256sum -c --status ||
  { echo "install-onnxruntime: libonnxruntime.so.1 does not have the expected SHA-256" >&2; exit 1; }
mkdir -p "$dest"
install -m 0644 "$work/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$lib.tmp"
mv "$lib.tmp" "$lib"
echo "ONNX Runtime $version installed at $lib"
