#!/usr/bin/env python
"""Validate the Zero to JupyterHub values (classroom/z2jh/config.yaml) against the schema of the
chart version they are written for, as ``helm install`` does before it renders anything.

    python -m scripts.check_z2jh_values                 # classroom/z2jh/config.yaml
    python -m scripts.check_z2jh_values my-values.yaml

Helm merges the values given into the chart's own defaults (maps key by key, a null removes a
key) and checks the result against the chart's values schema; a misspelled or misplaced key is
an error. The chart cannot be downloaded here, so its ``values.schema.yaml`` and ``values.yaml``
are kept in classroom/z2jh/chart-<CHART_VERSION>/ (their source is named there). Exit status 1
and one line per problem when the values do not validate.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHART_VERSION = "4.4.0"  # the released chart the values are written for: helm ... --version 4.4.0
CHART = ROOT / "classroom" / "z2jh" / f"chart-{CHART_VERSION}"
VALUES = ROOT / "classroom" / "z2jh" / "config.yaml"


def merged(defaults, overrides):
    """``overrides`` laid over ``defaults`` the way Helm merges a values file into a chart's
    values: maps merge key by key, anything else replaces, and a null deletes the key."""
    if not (isinstance(defaults, dict) and isinstance(overrides, dict)):
        return overrides
    result = dict(defaults)
    for key, value in overrides.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merged(defaults.get(key), value)
    return result


def problems(values: dict, chart: Path = CHART) -> list[str]:
    """Every way ``values``, merged into the chart's defaults, breaks the chart's schema, one
    sentence each naming where (an empty list when they validate)."""
    if not isinstance(values, dict):
        raise TypeError(f"values must be a mapping (a YAML file of keys), got {type(values).__name__}")
    schema = yaml.safe_load((chart / "values.schema.yaml").read_text())
    defaults = yaml.safe_load((chart / "values.yaml").read_text())
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(merged(defaults, values)), key=lambda error: list(error.absolute_path))
    return [f"{'.'.join(map(str, error.absolute_path)) or '(top level)'}: {error.message}" for error in errors]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("values", nargs="?", type=Path, default=VALUES, help=f"values file (default {VALUES})")
    args = parser.parse_args(argv)
    found = problems(yaml.safe_load(args.values.read_text()))
    for problem in found:
        print(problem, file=sys.stderr)
    print(f"{args.values}: {'does not validate' if found else 'validates'} against the schema of the "
          f"jupyterhub chart {CHART_VERSION}" + (f" ({len(found)} problems)" if found else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
