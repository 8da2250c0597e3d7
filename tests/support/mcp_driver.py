"""Drives an MCP server with the official Python SDK (`mcp` from PyPI), for
the Rust tests: they write one JSON command per line on stdin and read one
JSON answer per line on stdout.

    mcp_driver.py MODE stdio COMMAND [ARG...]
    mcp_driver.py MODE http URL TOKEN

MODE is the SDK's connect mode: `legacy` (initialize, 2025-11-25) or a
protocol version such as `2026-07-28`.

Commands:
    {"op": "info"}                          -> {"protocolVersion", "serverName"}
    {"op": "list"}                          -> {"tools": [{name, description, inputSchema}]}
    {"op": "call", "name", "args", "id"?}   -> the result (below); with "id" the call
                                               runs in the background: {"started": id}
    {"op": "result", "id", "timeout"}       -> the background call's result
    {"op": "progress", "id", "count", "timeout"} -> {"progress": [...]} once `count` arrived
    {"op": "changed", "timeout"}            -> {"changed": bool}: a tools/list_changed
                                               arrived since the last "changed"
    {"op": "served"}                        -> each method of a declared capability, with
                                               "ok" or the JSON-RPC error code it answered
    {"op": "exit"}

A result is {"isError", "structured", "text", "images"} or {"protocolError": message}.
"""

import contextlib
import json
import sys

import anyio
import httpx2 as httpx
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client


def emit(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def shape(result):
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    images = [c for c in result.content if getattr(c, "type", None) == "image"]
    return {
        "isError": bool(result.is_error),
        "structured": result.structured_content,
        "text": "\n".join(texts),
        "images": len(images),
        "imageBytes": sum(len(i.data) for i in images),
    }


async def main():
    mode, transport = sys.argv[1], sys.argv[2]
    changed = anyio.Event()
    state = {"changed": changed}
    progress = {}
    results = {}
    updated = {"event": anyio.Event()}

    def poke():
        updated["event"].set()
        updated["event"] = anyio.Event()

    async def until(holds, timeout):
        with anyio.move_on_after(timeout):
            while not holds():
                await updated["event"].wait()

    async def on_message(message):
        if isinstance(message, types.ServerNotification) and isinstance(
            message, types.ToolListChangedNotification
        ):
            state["changed"].set()
        elif getattr(message, "method", None) == "notifications/tools/list_changed":
            state["changed"].set()

    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            server = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
        else:
            url, token = sys.argv[3], sys.argv[4]
            http = await stack.enter_async_context(
                httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=None)
            )
            server = streamable_http_client(url, http_client=http)
        client = await stack.enter_async_context(
            Client(server, mode=mode, message_handler=on_message, client_info=types.Implementation(name="py-driver", version="1"))
        )
        group = await stack.enter_async_context(anyio.create_task_group())
        if mode != "legacy":

            async def listen():
                async with client.listen(tools_list_changed=True) as sub:
                    async for _event in sub:
                        state["changed"].set()

            group.start_soon(listen)

        async def call(name, args, key):
            seen = progress.setdefault(key, [])

            async def on_progress(done, total, message):
                seen.append({"progress": done, "total": total, "message": message})
                poke()

            try:
                result = shape(await client.call_tool(name, args, progress_callback=on_progress))
            except MCPError as e:
                result = {"protocolError": str(e), "code": e.error.code}
            results[key] = result
            poke()
            return result

        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                break
            command = json.loads(line)
            op = command["op"]
            if op == "exit":
                break
            if op == "info":
                emit({"protocolVersion": str(client.protocol_version)})
            elif op == "list":
                tools = (await client.list_tools()).tools
                emit({"tools": [
                    {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                    for t in tools
                ]})
            elif op == "call":
                key = command.get("id")
                if key is None:
                    emit(await call(command["name"], command.get("args", {}), "_"))
                else:
                    group.start_soon(call, command["name"], command.get("args", {}), key)
                    emit({"started": key})
            elif op == "result":
                await until(lambda: command["id"] in results, command.get("timeout", 30))
                emit(results.get(command["id"], {"timeout": True}))
            elif op == "progress":
                await until(
                    lambda: len(progress.get(command["id"], [])) >= command["count"],
                    command.get("timeout", 30),
                )
                emit({"progress": progress.get(command["id"], [])})
            elif op == "served":
                async def outcome(call):
                    try:
                        await call
                        return "ok"
                    except MCPError as e:
                        return e.error.code

                emit({
                    "prompts/list": await outcome(client.list_prompts()),
                    "prompts/get": await outcome(client.get_prompt("no-such-prompt")),
                    "resources/list": await outcome(client.list_resources()),
                    "resources/templates/list": await outcome(client.list_resource_templates()),
                    "resources/read": await outcome(client.read_resource("clawdis://no-such-resource")),
                    "logging/setLevel": await outcome(client.set_logging_level("info")),
                })
            elif op == "changed":
                with anyio.move_on_after(command.get("timeout", 30)):
                    await state["changed"].wait()
                happened = state["changed"].is_set()
                state["changed"] = anyio.Event()
                emit({"changed": happened})
            else:
                emit({"error": f"unknown op {op}"})
        group.cancel_scope.cancel()


anyio.run(main)
