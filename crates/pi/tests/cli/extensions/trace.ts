// Logs every extension event pi emits, one line each, to the file named by PI_TRACE_FILE, and
// registers `probe_tool`, which reports one update before its result.
import { appendFileSync } from "node:fs";
import { Type } from "typebox";

const EVENTS = [
	"project_trust", "resources_discover", "mcp_servers_change", "session_start", "session_info_changed",
	"session_before_switch", "session_before_fork", "session_before_compact", "session_compact",
	"session_compact_failed", "session_shutdown", "session_before_tree", "session_tree", "context",
	"context_with_system", "cache_warming_decision", "before_provider_headers", "before_provider_request",
	"after_provider_response", "provider_stream_event", "before_agent_start", "agent_start", "agent_end",
	"agent_before_settle", "agent_settled", "ui_prompt_start", "ui_prompt_end", "turn_start", "turn_end",
	"message_start", "message_update", "message_end", "tool_execution_start", "tool_execution_update",
	"tool_execution_end", "model_select", "thinking_level_select", "tool_call", "tool_result", "user_bash", "input",
];

function describe(name: string, event: any): string {
	const role = event?.message?.role;
	switch (name) {
		case "session_start":
		case "session_shutdown":
			return `reason=${event.reason}`;
		case "input":
			return `text=${JSON.stringify(event.text)}`;
		case "turn_start":
			return `turnIndex=${event.turnIndex}`;
		case "turn_end":
			return `turnIndex=${event.turnIndex} toolResults=${event.toolResults?.length} ids=${
				typeof event.messageEntryId === "string" ? 1 + (event.toolResultEntryIds?.length ?? 0) : 0
			}`;
		case "message_start":
		case "message_end":
			return `role=${role}`;
		case "message_update":
			return `kind=${event.assistantMessageEvent?.type} hasMessage=${role === "assistant"}`;
		case "tool_execution_start":
		case "tool_call":
		case "tool_result":
			return `tool=${event.toolName}`;
		case "tool_execution_end":
			return `tool=${event.toolName} isError=${event.isError}`;
		case "agent_end":
			// The run's system message (pi 1.6) is logged as its own message_start/end.
			return `messages=${event.messages?.filter((m: any) => m.role !== "system").length}`;
		case "agent_settled":
			return `aborted=${event.aborted}`;
		case "context":
		case "context_with_system":
			return `messages=${event.messages?.length} roles=${event.messages?.map((m: any) => m.role).join(",")}`;
		case "after_provider_response":
			return `status=${event.status}`;
		case "before_provider_request":
			return `hasMessages=${Array.isArray(event.payload?.messages)}`;
		default:
			return "";
	}
}

export default function (pi: any) {
	const file = process.env.PI_TRACE_FILE;
	const log = (line: string) => {
		if (file) appendFileSync(file, `${line}\n`);
	};
	for (const name of EVENTS) {
		pi.on(name, (event: any, ctx: any) => {
			const parts = [name, describe(name, event)];
			if (name === "agent_settled" || name === "agent_start") parts.push(`idle=${ctx.isIdle()}`);
			log(parts.filter((part) => part !== "").join(" "));
			if (name === "project_trust") return { trusted: "undecided" };
			return undefined;
		});
	}
	pi.registerTool({
		name: "probe_tool",
		label: "Probe",
		description: "Echoes its message.",
		parameters: Type.Object({ msg: Type.String() }),
		async execute(_id: string, params: { msg: string }, _signal: unknown, onUpdate: any) {
			onUpdate?.({ content: [{ type: "text", text: "partial" }], details: { step: 1 } });
			return { content: [{ type: "text", text: `echo: ${params.msg}` }], details: {} };
		},
	});
}
