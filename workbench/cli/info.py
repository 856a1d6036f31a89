"""``workbench info``: the device, the model's facts, the compute dtype and why, the cache
directory."""

from __future__ import annotations

import argparse
import json

from workbench.cli.options import add_model_options
from workbench.encoding.encoder import Encoder
from workbench.encoding.models import default_cache_dir


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("info", help="device, model facts, cache dir")
    add_model_options(p, pooling=False)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_info)


def cmd_info(args: argparse.Namespace) -> int:
    enc = Encoder(model=args.model, device=args.device, dtype=args.dtype)
    facts = enc.describe()
    facts["dtype_choice"] = enc.dtype_choice.reason
    facts["backend_choice"] = enc.backend.reason
    facts["cache_dir"] = str(default_cache_dir())
    if args.json:
        print(json.dumps(facts, indent=2))
    else:
        width = max(len(k) for k in facts)
        for key, value in facts.items():
            print(f"{key:<{width}}  {value}")
    return 0
