"""``dmlopt list`` and ``dmlopt schema``: the catalogue of problems, their methods with every
option (type, default, meaning) and the recommended ones, and their JSON Schemas."""

from __future__ import annotations

import argparse
import json
from typing import Any

from dmlopt import io, registry


def cmd_list(args: argparse.Namespace) -> int:
    if args.data:
        names = [name for name in io.shipped_instances()
                 if args.problem in (None, name.split("/")[0])]
        print(json.dumps(names, indent=2) if args.json else "\n".join(names))
        return 0
    if args.problem:
        prob = registry.get(args.problem)
        print(_dumps(describe_json(prob)) if args.json else describe(prob))
        return 0
    if args.json:
        print(_dumps([catalogue_entry(registry.get(name)) for name in registry.names()]))
        return 0
    for name in registry.names():
        prob = registry.get(name)
        print(f"{name}: {getattr(prob.model, 'TITLE', '')} (paper {prob.model.PAPER})")
        print(f"  formulations: {', '.join(prob.formulations) or '-'}")
        print(f"  heuristics:   {', '.join(prob.heuristics)}")
        print(f"  bounds:       {', '.join(prob.bound_entries) or '-'}")
        print(f"  generators:   {', '.join(prob.generators)}")
        print(f"  recommended:  {prob.recommended_line()}")
    print("\n`dmlopt list PROBLEM` shows every option and parameter with type, default and "
          "meaning.")
    return 0


def _dumps(data: Any) -> str:
    """JSON text of ``data``; an infinite or NaN default is written as null (JSON has none)."""
    from dmlopt.result import _finite

    return json.dumps(_finite(data), indent=2, default=str)


def catalogue_entry(prob: registry.Problem) -> dict[str, Any]:
    """One problem of ``dmlopt list --json``: its names, without their options.

    Parameters
    ----------
    prob : a registered problem.

    Returns
    -------
    dict
        ``name``, ``title``, ``paper``, ``sense`` and the names of its ``formulations``,
        ``heuristics``, ``bounds`` (strongest first) and ``generators``, and
        ``recommended``: ``{"heuristic": ..., "bound": ...}``, each a name or, where the choice
        depends on the instance, the text saying when each name applies.
    """
    return {"name": prob.name, "title": getattr(prob.model, "TITLE", ""),
            "paper": prob.model.PAPER, "sense": prob.sense,
            "formulations": list(prob.formulations), "heuristics": list(prob.heuristics),
            "bounds": list(prob.bound_entries), "generators": list(prob.generators),
            "recommended": prob.recommended_texts()}


def describe_json(prob: registry.Problem) -> dict[str, Any]:
    """``dmlopt list PROBLEM --json``: what :func:`describe` shows, as data.

    Parameters
    ----------
    prob : a registered problem.

    Returns
    -------
    dict
        The fields of :func:`catalogue_entry`, with ``formulations`` a list of ``{name,
        description, solvers}`` (``solvers`` empty: any solver), ``heuristics`` and ``bounds``
        lists of ``{name, description, options}`` and ``generators`` a list of ``{name,
        description, params}``, where ``options`` and ``params`` are JSON Schemas (as
        ``dmlopt schema`` prints them).
    """
    out = catalogue_entry(prob)
    out["formulations"] = [{"name": name, "description": f.description,
                            "solvers": list(f.solvers or ())}
                           for name, f in prob.formulation_entries.items()]
    out["heuristics"] = [{"name": name, "description": h.description,
                          "options": _schema(h.Options)} for name, h in prob.heuristics.items()]
    out["bounds"] = [{"name": name, "description": b.description, "options": _schema(b.Options)}
                     for name, b in prob.bound_entries.items()]
    out["generators"] = [{"name": name, "description": g.description,
                          "params": _schema(g.Params)}
                         for name, g in prob.generator_entries.items()]
    return out


def _schema(model: Any) -> dict[str, Any]:
    """The JSON Schema of an options model; field names and defaults for a field type that has
    no schema."""
    try:
        return model.model_json_schema()
    except Exception:  # noqa: BLE001 - same fallback as the text listing
        props = {k: ({} if f.is_required() else {"default": f.default})
                 for k, f in model.model_fields.items()}
        return {"title": model.__name__, "type": "object", "properties": props}


def describe(prob: registry.Problem) -> str:
    """A problem's formulations, heuristics (with options) and generators (with parameters)."""
    lines = [f"{prob.name}: {getattr(prob.model, 'TITLE', '')} (paper {prob.model.PAPER}, "
             f"{'maximise' if prob.sense == 'max' else 'minimise'})", "",
             f"recommended: {prob.recommended_line()} (what `dmlopt heuristic INSTANCE` and "
             "`dmlopt bound INSTANCE` run when no name is given)", "", "formulations:"]
    default = getattr(prob.model, "DEFAULT_FORMULATION", None) or "paper"
    for name, f in prob.formulation_entries.items():
        only = f" [{', '.join(f.solvers)} only]" if f.solvers else ""
        only += " [default]" if name == default else ""
        lines.append(f"  {name}{only}: {f.description}")
    if not prob.formulations:
        lines.append("  none (scored by its evaluator; use a heuristic)")
    lines += ["", "heuristics (dmlopt heuristic INSTANCE [NAME] --seed S --option KEY=VALUE):"]
    for name, h in prob.heuristics.items():
        lines.append(f"  {name}{prob.mark('heuristic', name)}: {h.description}")
        lines += _fields(h.Options)
    lines += ["", "bounds, strongest first (dmlopt bound INSTANCE --method NAME --time-limit S "
              "--option KEY=VALUE):"]
    for name, b in prob.bound_entries.items():
        lines.append(f"  {name}{prob.mark('bound', name)}: {b.description}")
        lines += _fields(b.Options)
    if not prob.bound_entries:
        lines.append("  none")
    lines += ["", "generators (dmlopt generate PROBLEM -g NAME --seed S -p KEY=VALUE):"]
    for name, g in prob.generator_entries.items():
        lines.append(f"  {name}: {g.description}")
        lines += _fields(g.Params)
    return "\n".join(lines)


def _fields(model: Any) -> list[str]:
    """One line per field: name (type, bounds, default): meaning, from the JSON Schema."""
    try:
        schema = model.model_json_schema()
    except Exception:  # noqa: BLE001 - a field type without a schema: name and default only
        schema = {"properties": {k: {} for k in model.model_fields}}
    defs = schema.get("$defs", {})
    out = []
    for key, field in model.model_fields.items():
        prop = schema.get("properties", {}).get(key, {})
        kind = _schema_type(prop, defs)
        default = "required" if field.is_required() else f"default {field.default!r}"
        meaning = f": {field.description}" if field.description else ""
        out.append(f"      {key} ({kind}{_bounds(prop)}, {default}){meaning}")
    return out


def _schema_type(prop: dict, defs: dict) -> str:
    if "enum" in prop:
        return " | ".join(repr(v) for v in prop["enum"])
    if "const" in prop:
        return repr(prop["const"])
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " | ".join(_schema_type(p, defs) for p in prop[key])
    kind = prop.get("type", "any")
    if kind == "array" and "items" in prop:
        return f"list of {_schema_type(prop['items'], defs)}"
    return {"integer": "int", "number": "float", "string": "str", "boolean": "bool",
            "null": "null"}.get(kind, str(kind))


def _bounds(prop: dict) -> str:
    marks = (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="),
             ("exclusiveMaximum", "<"))
    found = [f"{op} {prop[k]}" for k, op in marks if k in prop]
    for sub in prop.get("anyOf", []):
        found += [f"{op} {sub[k]}" for k, op in marks if k in sub]
    return f", {' '.join(found)}" if found else ""


def cmd_schema(args: argparse.Namespace) -> int:
    prob = registry.get(args.problem)
    if args.heuristic:
        cls = prob.heuristic(args.heuristic).Options
    elif args.generator:
        cls = prob.generator(args.generator).Params
    else:
        cls = prob.model.Solution if args.solution else prob.model.Instance
    print(json.dumps(cls.model_json_schema(), indent=2))
    return 0


#: what ``dmlopt --help`` says first
