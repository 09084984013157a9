#!/usr/bin/python3
"""Validates a JSON document against a JSON Schema with Debian's
python3-jsonschema.  Usage: validate-json.py SCHEMA DOCUMENT; exit 0 if valid,
1 (and the errors) if not."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
document = json.load(open(sys.argv[2]))
validator = jsonschema.Draft202012Validator(schema)
errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
for e in errors:
    print("/".join(str(p) for p in e.path) + ": " + e.message)
sys.exit(1 if errors else 0)
