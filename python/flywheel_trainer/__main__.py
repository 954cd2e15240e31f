"""python -m flywheel_trainer --server URL --key WORKER_KEY --base-model ID [--base-model ID ...]

Also under torchrun: torchrun --nproc-per-node N -m flywheel_trainer ... (rank 0 talks to the server;
every rank trains its share of each step)."""

import argparse
import os
import sys

from .model import DTYPES
from .worker import Worker


def main(argv=None):
    parser = argparse.ArgumentParser(prog="flywheel_trainer", description="Train Flywheel's jobs with transformers + PEFT (the PyTorch worker pool).")
    parser.add_argument("--server", default=os.environ.get("FLYWHEEL_SERVER"), help="Flywheel's URL (env FLYWHEEL_SERVER)")
    parser.add_argument("--key", default=os.environ.get("FLYWHEEL_WORKER_KEY"), help="a worker key: flywheel keys create --role worker (env FLYWHEEL_WORKER_KEY)")
    parser.add_argument("--base-model", action="append", default=[], help="a base model id this worker trains (repeat; env FLYWHEEL_BASE_MODELS, comma-separated)")
    parser.add_argument("--cache-dir", default=os.environ.get("FLYWHEEL_TRAINER_CACHE", ".flywheel-trainer"), help="where base models and job files are kept (shared by the ranks)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32", help="the base model's dtype (the adapter trains in float32)")
    parser.add_argument("--name", default=None, help="this worker's name in leases (default host:pid)")
    parser.add_argument("--poll-seconds", type=float, default=2.0)
    parser.add_argument("--max-jobs", type=int, default=None, help="exit after this many jobs")
    parser.add_argument("--exit-when-idle", action="store_true", help="exit when no job is waiting")
    args = parser.parse_args(argv)
    base_models = args.base_model or [m for m in os.environ.get("FLYWHEEL_BASE_MODELS", "").split(",") if m]
    if not args.server or not args.key or not base_models:
        parser.error("--server, --key and at least one --base-model are required")
    worker = Worker(args.server, args.key, base_models, args.cache_dir, dtype=args.dtype, name=args.name, log=lambda message: print(message, file=sys.stderr, flush=True))
    worker.run(poll_seconds=args.poll_seconds, max_jobs=args.max_jobs, exit_when_idle=args.exit_when_idle)


if __name__ == "__main__":
    main()
