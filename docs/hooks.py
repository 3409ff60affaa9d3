"""MkDocs hook: the generated parts of the reference, made at build time from the code.

A page holds a marker comment on a line of its own; `on_page_markdown` replaces it with
markdown generated from the object the marker names, so the reference cannot drift from
the code:

- `<!-- embedsearch:cli -->`: every command, subcommand and option of `embedsearch`,
  from its argparse parser (`embedsearch.cli.parser.build_parser()`);
- `<!-- embedsearch:http-api -->`: every endpoint, parameter and body of the HTTP API,
  from the FastAPI app's OpenAPI schema. The app is made over a stand-in engine: routes
  only call the engine when a request comes, so no index, model or FAISS is needed.
  Then `/mcp`, which OpenAPI does not describe (the MCP SDK's app, not a FastAPI
  route): its methods from the route `embedsearch.server.assistant` adds, its tools
  and their arguments as `tools/list` gives them to a client.

The generated headings sit under the page's one `#` heading: the CLI's commands at `###`
below the page's `## Commands and options` (a command's subcommands, such as `watch
add`, at `####` under it), the HTTP API's `## Endpoints` and `## Schemas`
with an `###` per endpoint and schema. Material's table of contents shows only the
children of a page's first `#` heading, so a second `#` would hide them all from it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CLI_MARKER = "<!-- embedsearch:cli -->"
HTTP_MARKER = "<!-- embedsearch:http-api -->"
#: Usage lines are wrapped at this width whatever the terminal that runs the build:
#: argparse fills COLUMNS - 2 = 78 characters, which a code block of the site shows
#: whole beside both sidebars (80 at Material's default size).
USAGE_COLUMNS = "80"


@contextmanager
def _stable_environment() -> Iterator[None]:
    """Help text as on a default installation: fixed width, no local data path."""
    saved = {name: os.environ.get(name) for name in ("COLUMNS", "EMBEDSEARCH_DEV_DATA")}
    os.environ["COLUMNS"] = USAGE_COLUMNS
    os.environ.pop("EMBEDSEARCH_DEV_DATA", None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _cell(text: object) -> str:
    """Text made safe for one markdown table cell."""
    return (" ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")
            .replace(">", "&gt;"))


# --- the command line -------------------------------------------------------------------

def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser,
                                                                  str]]:
    """(name, parser, one-line summary) of each subcommand, in the order of the help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries = {choice.dest: choice.help or "" for choice in action._choices_actions}
            return [(name, sub, summaries.get(name, ""))
                    for name, sub in action.choices.items()]
    return []


def _argument_name(action: argparse.Action) -> str:
    """`-q`, `--quiet`; `--index DIR`; `--ray [ADDRESS]`; `INPUT` (one or more)."""
    if action.option_strings:
        *others, last = action.option_strings
        metavar = action.metavar or (None if action.choices else action.dest.upper())
        if action.nargs != 0 and metavar is not None:
            if action.nargs == "?":
                last += f" [{metavar}]"
            elif action.nargs in ("+", "*"):
                last += f" {metavar} ..."
            else:
                last += f" {metavar}"
        return ", ".join(f"`{name}`" for name in [*others, last])
    name = action.metavar or action.dest
    more = {"+": " (one or more)", "*": " (any number)", "?": " (optional)"}
    return f"`{name}`" + more.get(str(action.nargs), "")


def _default(action: argparse.Action) -> str:
    value = action.default
    if (action.nargs == 0 or value is None or value is argparse.SUPPRESS or value == []
            or action.required):
        return ""
    return f"`{value}`"


def _arguments_table(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    rows = ["| argument | default | what it does |", "|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.help is argparse.SUPPRESS:
            continue
        text = formatter._expand_help(action) if action.help else ""
        if action.choices and not isinstance(action.choices, dict):
            text += " Choices: " + ", ".join(f"`{choice}`" for choice in action.choices) + "."
        if action.required and action.option_strings:
            text = "**Required.** " + text
        rows.append(f"| {_argument_name(action)} | {_default(action)} | {_cell(text)} |")
    return rows if len(rows) > 2 else []


def _command_section(title: str, parser: argparse.ArgumentParser, summary: str,
                     level: int) -> list[str]:
    lines = [f"{'#' * level} `{title}`", ""]
    description = parser.description or summary
    if description:
        lines += [description.strip(), ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    table = _arguments_table(parser)
    if table:
        lines += table + [""]
    return lines


def _anchor(title: str) -> str:
    """The id the toc extension gives the heading `title` (`embedsearch watch add`)."""
    return "-".join(title.split())


def _command_tree(title: str, parser: argparse.ArgumentParser, summary: str,
                  level: int) -> list[str]:
    """The section of the command `title`, then its subcommands', each a heading level
    deeper (`watch`, then `watch add`, `watch list`, `watch remove`), however deep."""
    lines = _command_section(title, parser, summary, level)
    commands = _subcommands(parser)
    if commands:
        lines += ["| command | what it does |", "|---|---|"]
        lines += [f"| [`{name}`](#{_anchor(f'{title} {name}')}) | {_cell(text)} |"
                  for name, _, text in commands]
        lines.append("")
    # The root's commands stay at its level: each is a page section of its own.
    deeper = level if title == "embedsearch" else level + 1
    for name, sub, text in commands:
        lines += _command_tree(f"{title} {name}", sub, text, deeper)
    return lines


def cli_markdown() -> str:
    """The reference of every command and subcommand, generated from the parsers."""
    from embedsearch.cli.parser import build_parser

    with _stable_environment():
        return "\n".join(_command_tree("embedsearch", build_parser(), "", 3))


# --- the HTTP API -----------------------------------------------------------------------

def _schema_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _number(value: Any) -> str:
    """1.0 as 1, None as ''."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else str(value)


def _type(schema: dict[str, Any]) -> str:
    """A JSON schema as a short type: `string`, `integer (1-100)`, [SearchOut](#searchout)."""
    if "$ref" in schema:
        name = _schema_name(schema["$ref"])
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema:
        kinds = [_type(option) for option in schema["anyOf"]]
        return " or ".join(dict.fromkeys(kinds))
    if "enum" in schema:
        return "one of " + ", ".join(f"`{value}`" for value in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    kind = schema.get("type", "any")
    if kind == "array":
        text = f"array of {_type(schema.get('items', {}))}"
    elif kind == "object" and "additionalProperties" in schema:
        extra = schema["additionalProperties"]
        text = f"object of {_type(extra) if isinstance(extra, dict) else 'any'}"
    else:
        text = str(kind)
    bounds = []
    for low, high, unit in (("minimum", "maximum", ""), ("minLength", "maxLength", " chars"),
                            ("minItems", "maxItems", " items")):
        least, most = _number(schema.get(low)), _number(schema.get(high))
        if least and most:
            bounds.append(f"{least}-{most}{unit}")
        elif most:
            bounds.append(f"at most {most}{unit}")
        elif least:
            bounds.append(f"at least {least}{unit}")
    for key, sign in (("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
        if key in schema:
            bounds.append(f"{sign} {schema[key]}")
    return f"{text} ({', '.join(bounds)})" if bounds else text


def _openapi() -> dict[str, Any]:
    try:
        from embedsearch.server.app import create_app
    except ImportError as exc:  # the server extra is not installed
        raise RuntimeError("the HTTP reference is generated from the FastAPI app: install "
                           "the server extra (pip install -e \".[server,docs]\")") from exc
    # A stand-in engine: create_app only hands it to the routes, which call it per request.
    return create_app(object(), compute_map=False).openapi()  # type: ignore[arg-type]


def _operation(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", ""]
    if operation.get("description"):
        lines += [operation["description"].strip(), ""]
    elif operation.get("summary"):
        lines += [operation["summary"], ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | type | required | default | description |",
                  "|---|---|---|---|---|---|"]
        for parameter in parameters:
            schema = parameter.get("schema", {})
            default = f"`{json.dumps(schema['default'])}`" if "default" in schema else ""
            described = parameter.get("description", schema.get("description", ""))
            lines.append(f"| `{parameter['name']}` | {parameter['in']} | {_cell(_type(schema))} "
                         f"| {'yes' if parameter.get('required') else 'no'} | {default} "
                         f"| {_cell(described)} |")
        lines.append("")
    body = operation.get("requestBody")
    if body:
        for media, content in body.get("content", {}).items():
            lines += [f"Request body ({media}): {_type(content.get('schema', {}))}", ""]
    responses = operation.get("responses", {})
    if responses:
        lines += ["| status | meaning | body |", "|---|---|---|"]
        for status, response in responses.items():
            content = response.get("content", {}).get("application/json", {})
            shape = _type(content["schema"]) if content.get("schema") else ""
            lines.append(f"| {status} | {_cell(response.get('description', ''))} "
                         f"| {_cell(shape)} |")
        lines.append("")
    return lines


def _schema_section(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [" ".join(schema["description"].split()), ""]
    properties = schema.get("properties", {})
    if not properties:
        return lines + [f"Type: {_type(schema)}", ""]
    return lines + _properties_table(schema, "field")


def _properties_table(schema: dict[str, Any], column: str) -> list[str]:
    """A JSON schema's properties as a table: name (headed `column`), type, whether
    required, default and description; an OpenAPI body and an MCP tool's arguments alike."""
    required = set(schema.get("required", []))
    lines = [f"| {column} | type | required | default | description |", "|---|---|---|---|---|"]
    for name, spec in schema.get("properties", {}).items():
        default = f"`{json.dumps(spec['default'])}`" if "default" in spec else ""
        lines.append(f"| `{name}` | {_cell(_type(spec))} | {'yes' if name in required else 'no'} "
                     f"| {_cell(default)} | {_cell(spec.get('description', ''))} |")
    return lines + [""]


def _mcp_tools() -> tuple[str, list[str], list[Any]]:
    """The path, methods and tools (as a client lists them) of the MCP endpoint
    `embedsearch serve` mounts: a route of its own, which OpenAPI does not describe."""
    import asyncio

    from embedsearch.integrations.mcp import create_server
    from embedsearch.server.assistant import assistant

    # The stand-in engine again: the tools call it only when one is called.
    routes = assistant(object()).routes  # type: ignore[arg-type]
    if not routes:
        raise RuntimeError("the /mcp reference is generated from the MCP tools: install "
                           "the server extra, which brings the mcp package")
    route = routes[0]
    tools = asyncio.run(create_server(object(), local=False).list_tools())  # type: ignore[arg-type]
    return (str(getattr(route, "path", "")), sorted(getattr(route, "methods", ())),
            list(tools))


def _tool_section(tool: Any) -> list[str]:
    lines = [f"**`{tool.name}`**: {tool.description or ''}", ""]
    properties = tool.input_schema.get("properties", {})
    if not properties:
        return lines + ["No arguments.", ""]
    return lines + _properties_table(tool.input_schema, "argument")


def mcp_markdown() -> str:
    """The MCP endpoint's section: its methods and every tool with its arguments."""
    path, methods, tools = _mcp_tools()
    lines = []
    for method in methods:
        lines += [f"### `{method} {path}`", "",
                  "The tools of `embedsearch mcp` for AI assistants, over the Model Context "
                  "Protocol's streamable HTTP transport (how it is answered and guarded: "
                  "[The MCP endpoint](#the-mcp-endpoint)). Each tool as `tools/list` "
                  "describes it:", ""]
    for tool in tools:
        lines += _tool_section(tool)
    return "\n".join(lines)


def http_markdown() -> str:
    """The reference of every endpoint and schema, generated from the OpenAPI schema."""
    schema = _openapi()
    info = schema.get("info", {})
    lines = ["## Endpoints", "",
             f"Generated from the OpenAPI {schema.get('openapi', '')} schema of "
             f"{info.get('title', 'the app')} {info.get('version', '')}, the one a running "
             "server serves at `/openapi.json`.", ""]
    for path, methods in schema.get("paths", {}).items():
        for method, operation in methods.items():
            lines += _operation(method, path, operation)
    lines += [mcp_markdown(), "## Schemas", ""]
    for name, component in schema.get("components", {}).get("schemas", {}).items():
        lines += _schema_section(name, component)
    return "\n".join(lines)


# --- the hook ---------------------------------------------------------------------------

_GENERATORS: dict[str, Callable[[], str]] = {CLI_MARKER: cli_markdown,
                                              HTTP_MARKER: http_markdown}
_made: dict[str, str] = {}  # generated once per build (mkdocs serve rebuilds reload it)


def on_startup(**kwargs: Any) -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def on_pre_build(**kwargs: Any) -> None:
    _made.clear()


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    for marker, generate in _GENERATORS.items():
        if marker in markdown:
            if marker not in _made:
                _made[marker] = generate()
            markdown = markdown.replace(marker, _made[marker])
    return markdown
