"""Drives `coalprof mcp` with the official MCP Python SDK's client (PyPI `mcp`), for
tests/it/mcp.rs: runs the plan in argv[1] (JSON: the server's command, environment and folder,
and the tool calls to make) and prints what happened as one JSON document on stdout. The test
asserts; this only drives.

An argument `@run_folder:N` is the run folder call N returned. A call may ask for progress
notifications (`progress`), and may be cancelled after
`cancel_after` seconds (the SDK then sends notifications/cancelled); `watch` names a string
whose processes (by command line) are listed 3 s after the call ended, to see none survived.
"""

import json
import os
import sys
import time

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def processes_with(needle):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmd and "client.py" not in cmd:
            found.append(cmd.strip())
    return found


def resolve(value, calls):
    """`@run_folder:N` in an argument: the run folder call N returned (a later call reads it)."""
    if isinstance(value, str) and value.startswith("@run_folder:"):
        return calls[int(value.split(":")[1])]["structured"]["run_folder"]
    if isinstance(value, list):
        return [resolve(v, calls) for v in value]
    return value


async def run(plan):
    server = StdioServerParameters(command=plan["command"][0], args=plan["command"][1:], env=plan["env"], cwd=plan["cwd"])
    report = {"calls": []}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            started = time.monotonic()
            init = await session.initialize()
            report["initialize_ms"] = (time.monotonic() - started) * 1000
            report["protocol_version"] = init.protocol_version
            report["server_name"] = init.server_info.name
            report["instructions"] = init.instructions
            tools = await session.list_tools()
            report["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools.tools
            ]
            for call in plan["calls"]:
                progress = []

                async def on_progress(value, total, message, progress=progress):
                    progress.append({"progress": value, "message": message})

                entry = {"tool": call["tool"], "progress": progress, "cancelled": False}
                arguments = {k: resolve(v, report["calls"]) for k, v in call["arguments"].items()}
                started = time.monotonic()
                result = None
                with anyio.move_on_after(call.get("cancel_after") or 1e9) as scope:
                    result = await session.call_tool(
                        call["tool"],
                        arguments,
                        progress_callback=on_progress if call.get("progress") else None,
                    )
                entry["seconds"] = time.monotonic() - started
                if scope.cancelled_caught:
                    entry["cancelled"] = True
                else:
                    entry["is_error"] = bool(result.is_error)
                    entry["structured"] = result.structured_content
                    entry["texts"] = [c.text for c in result.content if c.type == "text"]
                if call.get("watch"):
                    await anyio.sleep(3)
                    entry["survivors"] = processes_with(call["watch"])
                report["calls"].append(entry)
    return report


def main():
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    report = anyio.run(run, plan)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
