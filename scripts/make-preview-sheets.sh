#!/usr/bin/env bash
# Makes the README's contact sheets, docs/preview/STAGE.png, with `stylepipe
# preview` on two small generated clips: a slow zoom into the pagoda photo the
# pencil README ships (192x128, 2 s at 10 fps) and a pan over a Mirror Magic
# sprite sheet (mirrormagic-data, 96x64) for the pixel-art stages. CPU backend,
# so the sheets are the same on every machine.
#   scripts/make-preview-sheets.sh [STYLEPIPE]   (default: build/stylepipe)
set -euo pipefail
cd "$(dirname "$0")/.."
stylepipe=$(realpath "${1:-build/stylepipe}")
repo=$(pwd)
out=$repo/docs/preview
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
ff() { ffmpeg -hide_banner -v error -y "$@"; }

ff -loop 1 -framerate 10 -i stages/pencil/examples/examples_china.jpg -t 2 \
   -vf "crop=480:320:0:0,zoompan=z='1+0.01*on':x='iw/2-iw/zoom/2':y='ih/2-ih/zoom/2':d=1:s=192x128:fps=10" \
   -c:v ffv1 "$work/photo.mkv"
ff -loop 1 -framerate 10 -i /usr/share/games/mirrormagic/graphics/gfx_classic/RocksHeroes.png -t 2 \
   -vf "crop=96:64:x='floor(t*8)':y=0" -c:v ffv1 -pix_fmt bgr0 "$work/sprites.mkv"

preview() { "$stylepipe" preview "$@" --backend cpu -y; }
preview configs/pencil.yaml -i "$work/photo.mkv" --at 1.5 \
  --vary pencil.line_length=3,9 --vary pencil.color=false -o "$out/pencil.png"
preview configs/lowpoly.yaml -i "$work/photo.mkv" --at 1.5 \
  --vary lowpoly.points_per_mp=20000,80000 --vary lowpoly.line_width=1 -o "$out/lowpoly.png"
# stipple.yaml also writes each frame's dots as SVG: keep them out of the tree.
(cd "$work" && "$stylepipe" preview "$repo/configs/stipple.yaml" -i photo.mkv --at 1.5 \
  --vary halftone.dots_per_pixel=0.1,0.5 --vary halftone.channels=cmy -o "$out/halftone.png" --backend cpu -y)
preview configs/example.yaml -i "$work/photo.mkv" --at 1.5 \
  --vary scale.filter=nearest,bilinear -o "$out/scale.png"
preview configs/xbr-live.yaml -i "$work/sprites.mkv" --at 1 \
  --vary xbr.scale=2,3 --vary xbr.mode=threshold -o "$out/xbr.png"
ls -l "$out"
