#!/usr/bin/env bash
# The Debian packages the service needs, installed when missing (used by setup-and-serve.sh and
# .ci/run): ffmpeg for media; festival + the slt HTS voice + the CMU lexicon (the default local voice,
# with native word and phone timings), pocketsphinx + its US English model (forced alignment),
# praat (voice profiles and cloning) and rubberband-cli. RHVoice's English voices are better but live
# in Debian's contrib/non-free components: they are added to apt's sources and installed when
# possible, and skipped (with a note) when not; the local provider then offers the festival voice.
# Non-interactive; as root or with passwordless sudo.
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

updated=0
apt_update() { [ "$updated" = 1 ] || { as_root apt-get update -qq && updated=1; }; }

if [ ${#missing[@]} -gt 0 ]; then
  pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
  echo "installing system packages: $pkgs"
  apt_update
  # shellcheck disable=SC2086
  as_root apt-get install -y -qq --no-install-recommends $pkgs
fi

if ! command -v RHVoice-test >/dev/null 2>&1 || [ ! -d /usr/share/RHVoice/voices/clb ]; then
  list=/etc/apt/sources.list.d/lipsync-contrib-non-free.sources
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  if [ -n "$codename" ] && [ -d /etc/apt/sources.list.d ] && ! grep -rqs 'non-free' /etc/apt/sources.list /etc/apt/sources.list.d; then
    echo "adding Debian's contrib and non-free components for RHVoice ($list)"
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s %s-updates\nComponents: contrib non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$codename" "$codename" | as_root tee "$list" >/dev/null
    updated=0
  fi
  apt_update || true
  if ! as_root apt-get install -y -qq --no-install-recommends rhvoice rhvoice-english; then
    echo "note: RHVoice could not be installed; the local provider offers the festival voice (slt-hts) only" >&2
  fi
fi
