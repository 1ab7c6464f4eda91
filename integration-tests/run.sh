#!/usr/bin/env bash
# The integration suite (pytest) against a live emulation + the real hybridlbd. Root needed.
# Builds what is missing first. Last line: pytest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash integration-tests/build-missing.sh
# (the chaos suite, integration-tests/chaos, runs on its own: integration-tests/chaos.sh)
exec /usr/bin/python3 -m pytest -p no:cacheprovider -v -s --ignore=integration-tests/chaos integration-tests "$@"
