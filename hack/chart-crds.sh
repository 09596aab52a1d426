#!/usr/bin/env bash
# Copies crds/ (the one source of Cairn's CustomResourceDefinitions) into the
# chart charts/cairn/crds/, where Helm installs them from. Run after changing a
# CRD: test/integration/charts/cairn-chart.test.ts fails while they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f charts/cairn/crds/*.yaml
cp crds/*.yaml charts/cairn/crds/
echo "charts/cairn/crds: $(ls charts/cairn/crds | wc -l) CRDs copied from crds/"
