#!/usr/bin/env bash
# Per-iteration timings on the GPU machine (after scripts/gpu-dev.sh built stylepipe):
# time per iteration = (frame time at 20 iterations - at 10) / 10.
cd "$(dirname "$0")/../../.."
b=build-gpu-dev/stylepipe
run() { timeout 120 $b bench --config stages/halftone/bench/$1.yaml --size $2 --frames $3 --warmup 2 2>&1 |
  grep -E "^halftone |profile|ms_|chain, device" ; }
for c in dots30k_it10 dots30k_it20; do echo "== $c"; run $c 256x256 30; done
for c in dots1m_it10 dots1m_it20 dots1m_fast_it10 dots1m_fast_it20; do echo "== $c"; run $c 2048x2048 6; done
echo "== configs/bench/halftone.yaml 1920x1080"
timeout 120 $b bench --config configs/bench/halftone.yaml --size 1920x1080 --frames 30 --warmup 5 2>&1 | grep -E "^halftone |dots|chain"
echo "== CPU backend (FFTW, $(nproc) threads)"
for c in dots30k_it10 dots30k_it20; do echo "== cpu $c"; timeout 60 $b bench --backend cpu --config stages/halftone/bench/$c.yaml --size 256x256 --frames 4 --warmup 1 2>&1 | grep -E "^halftone |fps|frames/s"; done
