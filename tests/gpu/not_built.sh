#!/usr/bin/env bash
# Stands in for the differential suite (gpu:differential) in a build without CUDA, so the GPU
# tests show as skipped with the reason instead of vanishing from ctest's list. With
# DGQ_GPU_REQUIRED=1 (a machine meant to run them) it fails instead.
# Usage: not_built.sh REASON
reason="${1:-the CUDA implementation was not built}"
if [ "${DGQ_GPU_REQUIRED:-0}" = 1 ]; then
  echo "FAIL: DGQ_GPU_REQUIRED=1 but $reason"
  exit 1
fi
echo "SKIP: $reason"
exit 77
