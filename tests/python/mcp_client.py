"""The official MCP Python SDK (`mcp` from PyPI) against the service's MCP endpoint, as one
subject: the tool list, then every tool called once (tests/api/mcp.rs drives it and checks
what it prints).

Usage: mcp_client.py URL TOKEN JOB_ID MODE
MODE is the client's `mode`: `auto` (its default: `server/discover`, the 2026-07-28 revision's
per-request envelope) or `legacy` (the `initialize` handshake).
Prints one JSON object: the revision used, the tools with their annotations, and each call's
answer (the structured content, or the error text of a refused call).
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def outcome(result):
    """A tool answer as the test reads it: its JSON, or its refusal."""
    if result.is_error:
        return {"error": " ".join(c.text for c in result.content if c.type == "text")}
    text = "".join(c.text for c in result.content if c.type == "text")
    answer = json.loads(text)
    # The structured content is the same answer (clients read either).
    assert result.structured_content == answer, (result.structured_content, answer)
    return answer


async def main(url, token, job_id, mode):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http)
    out = {}
    async with http, Client(transport, mode=mode) as client:
        out["protocol_version"] = client.protocol_version
        out["server"] = client.server_info.name if client.server_info else None
        tools = await client.list_tools()
        out["tools"] = {
            t.name: {
                "read_only": t.annotations.read_only_hint if t.annotations else None,
                "required": t.input_schema.get("required", []),
            }
            for t in tools.tools
        }
        trips = {"layer": "default", "domain": "travel", "dataset": "trips"}
        payroll = {"layer": "default", "domain": "secret", "dataset": "payroll"}
        calls = {
            "list_datasets": ("list_datasets", {}),
            "describe_trips": ("describe_dataset", trips),
            "describe_payroll": ("describe_dataset", payroll),
            "query_trips": (
                "query",
                {**trips, "query": {"select_columns": ["region", "year"], "order_by_columns": [{"column": "year"}, {"column": "region"}]}, "max_rows": 2},
            ),
            "query_payroll": ("query", {**payroll, "query": {}}),
            "sql_trips": ("sql", {"sql": 'SELECT region, count(*) AS n FROM "default"."travel"."trips" GROUP BY region ORDER BY region'}),
            "sql_payroll": ("sql", {"sql": 'SELECT sum(salary) AS s FROM "default"."secret"."payroll"'}),
            "sql_write": ("sql", {"sql": 'DROP TABLE "default"."travel"."trips"'}),
            "job_status": ("job_status", {"job_id": job_id}),
        }
        for label, (tool, args) in calls.items():
            out[label] = outcome(await client.call_tool(tool, args))
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
