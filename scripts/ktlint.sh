#!/usr/bin/env bash
# ktlint over the Kotlin sources of the JetBrains adapter (settings: adapters/jetbrains/.editorconfig).
#   scripts/ktlint.sh            report what ktlint finds (exit 1 if anything)
#   scripts/ktlint.sh --format   fix what ktlint can fix, report the rest
#   scripts/ktlint.sh --install  fetch ktlint from Maven Central (com.pinterest.ktlint:ktlint-cli,
#                                its self-contained "all" jar) into the cache, if not there yet
set -euo pipefail
cd "$(dirname "$0")/.."

version=1.8.0
jar="${XDG_CACHE_HOME:-$HOME/.cache}/dline-lint/ktlint-cli-$version-all.jar"

if [ ! -f "$jar" ]; then
  echo "ktlint: fetching ktlint-cli $version from Maven Central"
  mvn -q -B -Dstyle.color=never dependency:copy "-Dartifact=com.pinterest.ktlint:ktlint-cli:$version:jar:all" \
    "-DoutputDirectory=$(dirname "$jar")" -Dmdep.overWriteReleases=true
fi
[ "${1:-}" = --install ] && exit 0

args=(--relative)
[ "${1:-}" = --format ] && args+=(--format)
exec java -jar "$jar" "${args[@]}" 'adapters/jetbrains/**/*.kt' 'adapters/jetbrains/**/*.kts' '!adapters/jetbrains/**/build/**' '!adapters/jetbrains/**/target/**'
