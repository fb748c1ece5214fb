// Registers the filesystem MCP server (MCP_SERVER_SCRIPT, run by MCP_NODE) as "fs", or, with
// MCP_CASE=bad, a server without command or url. Logs what getMcpServers shows to MCP_LOG.
import { appendFileSync } from "node:fs";

export default function (pi: any) {
	const log = (line: string) => appendFileSync(process.env.MCP_LOG!, `${line}\n`);
	if (process.env.MCP_CASE === "bad") pi.registerMcpServer("fs", { command: 42 });
	else {
		pi.registerMcpServer("fs", {
			command: process.env.MCP_NODE,
			args: [process.env.MCP_SERVER_SCRIPT, process.cwd()],
			exposure: "direct",
		});
	}
	log(`factory ${JSON.stringify(pi.getMcpServers())}`);
	pi.on("session_start", () => {
		const servers = pi.getMcpServers().map((s: any) => `${s.name}:${s.config.exposure}`);
		log(`session_start ${servers.join(",")}`);
	});
}
