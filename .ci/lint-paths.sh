#!/usr/bin/env bash
# Fails when a tracked text file names a path of a developer's machine (a checkout or notes
# directory under /work, /root or /home/<user>): nobody who clones the repository has it.
# Refer to files by their path inside the repository instead. Binary files are skipped.
set -uo pipefail
cd "$(dirname "$0")/.."

# A machine path starts the path (start of line, or after a character that cannot be part of a
# path), so a URL or a relative path that merely contains such a segment does not count.
pattern='(^|[^[:alnum:]_./~-])/(work|root)/|(^|[^[:alnum:]_./~-])/home/[[:alnum:]_]'

# git grep searches exactly the tracked files (as in the work tree); -I skips binary files.
git grep -n -I -E "$pattern" -- .
case $? in
    0) echo "lint-paths: the lines above name a path of a developer's machine; use a path inside the repository" >&2
       exit 1 ;;
    1) echo "lint-paths: no machine paths in tracked files" ;;
    *) echo "lint-paths: git grep failed (not a git checkout?)" >&2
       exit 2 ;;
esac
