#!/usr/bin/env bash
# The Debian packages the service needs, installed when missing (used by setup-and-serve.sh and
# .ci/run): ffmpeg for media; festival + the slt HTS voice + the CMU lexicon (the default local voice,
# with native word and phone timings), pocketsphinx + its US English model (forced alignment),
# praat (voice profiles and cloning), rubberband-cli and Apertium's translation pairs (dubbing). RHVoice's English voices are better, and
# espeak-ng + MBROLA (and SVOX Pico) speak the other languages (docs/dubbing-voices.md); they live partly in Debian's
# contrib/non-free components: they are added to apt's sources and installed when possible, and
# skipped (with a note) when not; the local provider then offers only the voices that are installed.
# Non-interactive; as root or with passwordless sudo. --with-browser adds Chromium and Firefox for the browser tests.
set -euo pipefail

as_root() {
  if [ "$(id -u)" = "0" ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo ${CI:+-n} "$@"
  else
    echo "need root for: $* (not root and no sudo)" >&2
    return 1
  fi
}
export DEBIAN_FRONTEND=noninteractive

# apt-get's own output (hundreds of dpkg lines, and container noise such as "debconf: delaying package
# configuration" or libkmod's "could not open /proc/modules") goes to a log shown only on failure.
apt_log=$(mktemp "${TMPDIR:-/tmp}/lipsync-apt.XXXXXX")
trap 'rm -f "$apt_log"' EXIT
apt_quiet() { as_root env DEBIAN_FRONTEND=noninteractive apt-get "$@" >>"$apt_log" 2>&1; }
apt_failed() {
  echo "apt-get failed; the end of its output:" >&2
  tail -n 25 "$apt_log" >&2
}

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need ffmpeg ffmpeg
need ffprobe ffmpeg
need festival festival
[ -d /usr/share/festival/voices/us/cmu_us_slt_arctic_hts ] || missing+=(festvox-us-slt-hts)
[ -d /usr/share/festival/dicts/cmu ] || missing+=(festlex-cmu)
need pocketsphinx_batch pocketsphinx
[ -d /usr/share/pocketsphinx/model/en-us ] || missing+=(pocketsphinx-en-us)
need praat praat
need rubberband rubberband-cli
# --with-browser (the test suite, .ci/run): Debian's Chromium, which the studio's browser tests drive,
# and Firefox ESR for a smoke test of the studio in Firefox.
if [ "${1:-}" = "--with-browser" ]; then
  need chromium chromium
  need firefox-esr firefox-esr
  [ -d /usr/share/fonts/truetype/dejavu ] || missing+=(fonts-dejavu-core)
fi
# Offline translation for dubbing (Apertium): English to and from Spanish, Catalan, Galician,
# Esperanto and Serbo-Croatian, plus Spanish to Portuguese, Italian and French for pivots.
need apertium apertium
for pair in eng-spa eng-cat en-gl eo-en hbs-eng es-pt spa-ita fr-es; do
  [ -d "/usr/share/apertium/apertium-$pair" ] || missing+=("apertium-$pair")
done

updated=0
apt_update() { [ "$updated" = 1 ] || { apt_quiet update -qq && updated=1; }; }

if [ ${#missing[@]} -gt 0 ]; then
  pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
  echo "installing system packages: $pkgs"
  started=$SECONDS
  # shellcheck disable=SC2086
  { apt_update && apt_quiet install -y -qq --no-install-recommends $pkgs; } || { apt_failed; exit 1; }
  echo "installed in $((SECONDS - started)) s"
else
  echo "system packages: ffmpeg and the speech engines are installed"
fi

# Adds Debian's contrib and non-free components to apt's sources once, unless some source has them.
add_contrib_non_free() {
  local list=/etc/apt/sources.list.d/lipsync-contrib-non-free.sources codename
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  if [ -n "$codename" ] && [ -d /etc/apt/sources.list.d ] && ! grep -rqs 'non-free' /etc/apt/sources.list /etc/apt/sources.list.d; then
    echo "adding Debian's contrib and non-free components for $1 ($list)"
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s %s-updates\nComponents: contrib non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$codename" "$codename" | as_root tee "$list" >/dev/null
    updated=0
  fi
}

if ! command -v RHVoice-test >/dev/null 2>&1 || [ ! -d /usr/share/RHVoice/voices/clb ]; then
  add_contrib_non_free RHVoice
  echo "installing RHVoice (optional: better English voices)"
  started=$SECONDS
  apt_update || true
  if apt_quiet install -y -qq --no-install-recommends rhvoice rhvoice-english; then
    echo "installed in $((SECONDS - started)) s"
  else
    echo "note: RHVoice is not available here (Debian's contrib/non-free components); the local provider offers the festival voice (slt-hts), which needs nothing more" >&2
  fi
fi

# Other languages: espeak-ng (main) writes phones with their times, mbrola (contrib) renders them with
# a voice database (non-free: free to use, but not in a product that is sold without the authors' leave).
mbrola_voices=(es1 es2 it3 it4 fr1 fr4 pt1 br3 cr1)
mbrola_missing=()
for v in "${mbrola_voices[@]}"; do [ -f "/usr/share/mbrola/$v/$v" ] || mbrola_missing+=("mbrola-$v"); done
if ! command -v espeak-ng >/dev/null 2>&1 || ! command -v mbrola >/dev/null 2>&1 || [ ${#mbrola_missing[@]} -gt 0 ]; then
  add_contrib_non_free MBROLA
  echo "installing espeak-ng and MBROLA voices (optional: Spanish, Catalan, Galician, Esperanto, Italian, French, Portuguese, Serbo-Croatian)"
  started=$SECONDS
  apt_update || true
  if apt_quiet install -y -qq --no-install-recommends espeak-ng mbrola "${mbrola_missing[@]}"; then
    echo "installed in $((SECONDS - started)) s"
  else
    echo "note: espeak-ng or the MBROLA voices are not available here (Debian's contrib/non-free components); the local provider speaks English only" >&2
  fi
fi

# SVOX Pico (non-free): smoother Spanish, Italian and French voices; their phone times are aligned
# from an MBROLA rendering (src/speech/pico.ts), so they are offered only next to the MBROLA voices.
if ! command -v pico2wave >/dev/null 2>&1; then
  add_contrib_non_free "SVOX Pico"
  echo "installing SVOX Pico (optional: Spanish, Italian and French voices for dubbing)"
  started=$SECONDS
  apt_update || true
  if apt_quiet install -y -qq --no-install-recommends libttspico-utils; then
    echo "installed in $((SECONDS - started)) s"
  else
    echo "note: SVOX Pico is not available here (Debian's non-free component); dubs use the MBROLA voices" >&2
  fi
fi
