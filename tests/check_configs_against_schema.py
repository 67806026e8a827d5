#!/usr/bin/env python3
"""The config JSON schema and `stylepipe validate` must agree on each config.

An independent validator (python3-jsonschema) checks every given config
against the schema, and `stylepipe validate --format github` checks it too.
They must flag the same parts of the file: the same pipeline entries
(pipeline[3]), the `pipeline`, `output` or `settings` value as a whole, or the
rest of the document. A part only one of them flags is a difference, named
with both sides' messages, unless EXEMPT names the rule behind it: a rule of
a stage's `validate` that a schema cannot express, which the schema's
description lists by the same name.

Usage: check_configs_against_schema.py --stylepipe BIN [--schema FILE] PATH...
(PATH: a config, or a folder searched for *.yaml). Without --schema the
schema is BIN's own `stylepipe schema` output.
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

try:
    import jsonschema
    import yaml
except ImportError as missing:
    sys.exit(f"check_configs_against_schema: {missing}: install python3-jsonschema and python3-yaml "
             "(scripts/install-deps.sh)")

# (config file name, part) -> (rule, words of the validator's message).
# Each is a rule of a stage's `validate` that relates parameters, which the
# schema cannot state; the test fails when the rule is no longer listed in the
# schema, when the message does not match, or when the exemption is not used.
EXEMPT = {
    ("cross_check.yaml", "pipeline[0]"): ("test_every.count_above_5_needs_slow_mode", "count above 5 needs mode"),
    ("cross_check.yaml", "pipeline[2]"): ("test_every.label_not_refuse", "refuses to run"),
    ("multiple_errors.yaml", "pipeline[2]"): ("test_every.count_above_5_needs_slow_mode", "count above 5 needs mode"),
}

# YAML 1.2 core schema, as yaml-cpp (the loader) and yaml-language-server read
# plain scalars; PyYAML's YAML 1.1 would read `yes` as true and `1e3` as text.
CORE_NULL = re.compile(r"~|null|Null|NULL|")
CORE_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
CORE_INT = re.compile(r"[-+]?[0-9]+")
CORE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


class PlainScalarsUntagged(yaml.SafeLoader):
    """Composes nodes only; plain scalars keep the tag '?' and are resolved by
    plain_scalar() (no YAML 1.1 booleans, dates or '<<' merges)."""

    def resolve(self, kind, value, implicit):
        if kind is yaml.ScalarNode and implicit[0]:
            return "?"
        return super().resolve(kind, value, implicit)


def plain_scalar(text):
    if CORE_NULL.fullmatch(text):
        return None
    if text in CORE_BOOL:
        return CORE_BOOL[text]
    if CORE_INT.fullmatch(text):
        return int(text)
    if CORE_FLOAT.fullmatch(text):
        return float(text)
    # .inf and .nan included: JSON has no such numbers, so they stay text and
    # fail a number's type, as the loader refuses them.
    return text


def position(mark):
    return (mark.line + 1, mark.column + 1)


def to_json(node, yaml_problems):
    """The JSON value of a composed node. Repeated keys keep their first value
    and are reported, as the loader and yaml-language-server report them."""
    if isinstance(node, yaml.ScalarNode):
        return plain_scalar(node.value) if node.tag == "?" else node.value
    if isinstance(node, yaml.SequenceNode):
        return [to_json(item, yaml_problems) for item in node.value]
    result = {}
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            yaml_problems.append((position(key.start_mark), "a key must be a plain name"))
            continue
        if key.value in result:
            yaml_problems.append((position(key.start_mark), f"duplicate key '{key.value}'"))
            continue
        result[key.value] = to_json(value, yaml_problems)
    return result


def part_at(root, pos):
    """The part of the document holding 1-based (line, column) `pos`."""
    if not isinstance(root, yaml.MappingNode):
        return "document"
    pairs = root.value
    for i, (key, value) in enumerate(pairs):
        end = position(pairs[i + 1][0].start_mark) if i + 1 < len(pairs) else (float("inf"), 0)
        if not position(key.start_mark) <= pos < end:
            continue
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        if name == "pipeline" and isinstance(value, yaml.SequenceNode):
            entries = value.value
            for j, entry in enumerate(entries):
                entry_end = position(entries[j + 1].start_mark) if j + 1 < len(entries) else end
                if position(entry.start_mark) <= pos < entry_end:
                    return f"pipeline[{j}]"
        return name if name in ("pipeline", "output", "settings") else "document"
    return "document"


def schema_part(error):
    path = list(error.absolute_path)
    if len(path) >= 2 and path[0] == "pipeline":
        return f"pipeline[{path[1]}]"
    if path and path[0] in ("pipeline", "output", "settings"):
        return path[0]
    return "document"


ANNOTATION = re.compile(r"::error file=[^,:]*(?:,line=(\d+),col=(\d+))?::(.*)")


def unescape_command_data(text):
    return text.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


def validator_problems(stylepipe, path):
    """[((line, col) or None, message)] of `stylepipe validate --format github`."""
    run = subprocess.run([stylepipe, "validate", "--format", "github", str(path)], capture_output=True, text=True)
    problems = []
    for line in run.stdout.splitlines():
        match = ANNOTATION.fullmatch(line)
        if match:
            at = (int(match[1]), int(match[2])) if match[1] else None
            problems.append((at, unescape_command_data(match[3])))
    if run.returncode not in (0, 78) or (run.returncode == 78) != bool(problems):
        raise RuntimeError(f"{path}: validate exited {run.returncode} with {len(problems)} annotations:\n"
                           f"{run.stdout}{run.stderr}")
    return problems


def check(path, stylepipe, validator, rules):
    """Differences between the schema and the validator on one config, as lines."""
    text = path.read_text(encoding="utf-8")
    loaded = validator_problems(stylepipe, path)
    try:
        root = yaml.compose(text, Loader=PlainScalarsUntagged)
    except yaml.YAMLError as e:
        # No document to compare part by part: both must refuse the file.
        return [] if loaded else [f"the YAML parser refuses it ({e}); validate accepts it"]
    yaml_problems = []
    instance = to_json(root, yaml_problems) if root is not None else None
    by_schema = {}
    for pos, message in yaml_problems:
        by_schema.setdefault(part_at(root, pos), []).append("YAML: " + message)
    for error in validator.iter_errors(instance):
        by_schema.setdefault(schema_part(error), []).append(f"{error.json_path}: {error.message}")
    by_validator = {}
    for pos, message in loaded:
        by_validator.setdefault(part_at(root, pos) if pos else "document", []).append(message)

    differences = []
    for part in sorted(set(by_validator) | set(by_schema) | {p for f, p in EXEMPT if f == path.name}):
        exempt = EXEMPT.get((path.name, part))
        if part in by_validator and part in by_schema:
            if exempt:
                differences.append(f"{part}: exempt as {exempt[0]}, but the schema rejects it too")
            continue
        if exempt:
            rule, words = exempt
            messages = by_validator.get(part, [])
            if part in by_schema or not messages:
                differences.append(f"{part}: exempt as {rule}, but validate accepts it")
            elif rule not in rules:
                differences.append(f"{part}: exempt as {rule}, which the schema's description does not list")
            elif not any(words in m for m in messages):
                differences.append(f"{part}: exempt as {rule} ('{words}'), but validate says: {messages}")
            continue
        if part in by_validator:
            differences.append(f"{part}: validate rejects it ({'; '.join(by_validator[part])}); the schema accepts it")
        else:
            differences.append(f"{part}: the schema rejects it ({'; '.join(by_schema[part])}); validate accepts it")
    return differences


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stylepipe", required=True)
    parser.add_argument("--schema", help="schema file (default: the output of `STYLEPIPE schema`)")
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()
    if args.schema:
        schema = json.loads(Path(args.schema).read_text(encoding="utf-8"))
    else:
        schema = json.loads(subprocess.run([args.stylepipe, "schema"], check=True, capture_output=True,
                                           text=True).stdout)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    # "- scale.factor_positive: ..." lines of the description.
    rules = set(re.findall(r"^- ([a-z0-9_]+\.[a-z0-9_]+):", schema.get("description", ""), re.M))

    configs = sorted(f for p in args.paths for f in ([p] if p.is_file() else p.rglob("*.yaml")))
    if not configs:
        sys.exit(f"no configs under {' '.join(map(str, args.paths))}")
    failed = 0
    for config in configs:
        differences = check(config, args.stylepipe, validator, rules)
        print(f"{'DIFFERS' if differences else 'agrees '} {config}")
        for line in differences:
            print(f"    {line}")
        failed += bool(differences)
    print(f"{len(configs) - failed} of {len(configs)} configs: the schema and validate agree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
