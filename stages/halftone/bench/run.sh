#!/usr/bin/env bash
# Halftone timings on the GPU machine, after scripts/gpu-dev.sh built stylepipe.
# Usage: stages/halftone/bench/run.sh [fastsum] [video] [direct] [cpu] [colour] [map]   (no argument: all)
#   fastsum: time per iteration = (frame time at 20 iterations - at 10) / 10, plus the
#            `profile` phase split (first iteration of each frame), 30k and 1e6 dots
#   video:   configs/bench/halftone.yaml at 1920x1080 (~250k dots, warm start)
#   direct:  repulsion: direct (GPU O(M^2) baseline), 30k and 1e6 dots (profile: ms per iteration)
#   cpu:     the CPU fast summation (FFTW, all threads), 30k and 1e6 dots (CPU profile on stderr)
#   colour:  configs/bench/halftone_cmy.yaml at 1920x1080 (three dot sets)
#   map:     near field by the cell table vs the seed's lookup map (neighbours: lookup_map), 30k and 1e6 dots
#   phases:  the video settings at 1920x1080 with the phase profile, defaults and other grids (video_*.yaml),
#            then ncu on one spread and one interpolate launch (NCU=0 skips it)
cd "$(dirname "$0")/../../.."
b=build-gpu-dev/stylepipe
sections=${*:-fastsum video direct cpu colour map phases}
want() { [[ " $sections " == *" $1 "* ]]; }
run() { timeout "${4:-120}" $b bench --config stages/halftone/bench/$1.yaml --size $2 --frames $3 --warmup ${5:-2} 2>&1 |
  grep -E "^halftone |profile|ms_|chain, device" ; }
if want fastsum; then
  for c in dots30k_it10 dots30k_it20; do echo "== $c"; run $c 256x256 30; done
  for c in dots1m_it10 dots1m_it20 dots1m_m3_it10 dots1m_m3_it20 dots1m_fast_it10 dots1m_fast_it20; do echo "== $c"; run $c 2048x2048 6; done
fi
if want video; then
  echo "== configs/bench/halftone.yaml 1920x1080"
  timeout 120 $b bench --config configs/bench/halftone.yaml --size 1920x1080 --frames 30 --warmup 5 2>&1 |
    grep -E "^halftone |dots|chain"
fi
if want direct; then
  echo "== direct30k"; run direct30k 256x256 10
  echo "== direct1m"; run direct1m 2048x2048 2 120 1
fi
if want cpu; then
  echo "== CPU backend (FFTW, $(nproc) threads)"
  for c in dots30k_it10 dots30k_it20; do echo "== cpu $c"; timeout 60 $b bench --backend cpu --config stages/halftone/bench/$c.yaml --size 256x256 --frames 4 --warmup 1 2>&1 | grep -E "^halftone |fps|frames/s|profile"; done
  echo "== cpu cpu1m"
  timeout 240 $b bench --backend cpu --config stages/halftone/bench/cpu1m.yaml --size 2048x2048 --frames 1 --warmup 0 2>&1 | grep -E "^halftone |frames/s|profile"
fi
if want colour; then
  echo "== configs/bench/halftone_cmy.yaml 1920x1080"
  timeout 120 $b bench --config configs/bench/halftone_cmy.yaml --size 1920x1080 --frames 30 --warmup 5 2>&1 |
    grep -E "^halftone |dots|chain"
fi
if want map; then
  for c in dots30k_it10 dots30k_map; do echo "== $c"; run $c 256x256 30; done
  for c in dots1m_it10 dots1m_map; do echo "== $c"; run $c 2048x2048 6; done
fi
if want phases; then
  for c in video_default video_s2 video_s15 video_s125 video_s15_nn48; do
    echo "== $c 1920x1080"; run $c 1920x1080 30 120 5
  done
  if [ "${NCU:-1}" != 0 ] && command -v ncu >/dev/null; then
    timeout 180 ncu --kernel-name regex:spread --launch-skip 40 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats \
      --metrics smsp__sass_inst_executed_op_shared_atom.sum,smsp__sass_inst_executed_op_global_red.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
      $b bench --config stages/halftone/bench/video_default.yaml --size 1920x1080 --frames 3 --warmup 1 2>&1 |
      grep -vE "^==PROF==|^ *-+( +-+)* *$|^ *$|^ {10}" | head -60
  fi
fi
